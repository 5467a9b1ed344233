// 1F1B (PipeDream-Flush, Narayanan et al., 2021; PyTorch's Schedule1F1B): rank k first runs
// r-1-k forwards (warm-up), then alternates one forward and one backward, then drains the
// remaining backwards. The bubble equals GPipe's, (r-1)/(m+r-1), but a rank never holds more
// than r-k microbatches' activations instead of m: the backward of the oldest microbatch frees
// memory before the next forward allocates more.
//
// It needs microbatches >= ranks, as PyTorch's does: with fewer there is no steady phase and the
// order is GPipe's, so asking for 1F1B then is a configuration mistake worth reporting.
#include <algorithm>
#include <memory>
#include <string>

#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace {

constexpr char kName[] = "1f1b";

class OneForwardOneBackward final : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape& shape) const override {
    baton::check_schedule_shape_positive(kName, shape);
    baton::require_stages_per_rank(kName, shape, 1,
                                   "one stage per rank; use interleaved_1f1b for several");
    baton::require_schedule_constraint(
        shape.microbatches >= shape.ranks, kName, "microbatches >= ranks (stages)",
        baton::format_count(shape.microbatches, "microbatch", "microbatches") + " for " +
            baton::format_count(shape.ranks, "rank", "ranks"));
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kLoop, kName);
    const int m = shape.microbatches;
    for (int rank = 0; rank < shape.ranks; ++rank) {
      baton::RankProgram program(&plan.rank_steps[rank], plan.num_stages);
      // Enough forwards in flight that the first backward arrives just as the warm-up ends.
      const int warmup = std::min(shape.ranks - 1 - rank, m);
      for (int i = 0; i < warmup; ++i) program.forward(rank);
      for (int i = warmup; i < m; ++i) {
        program.forward(rank);
        program.backward(rank);
      }
      for (int i = 0; i < warmup; ++i) program.backward(rank);
    }
    return plan;
  }
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<OneForwardOneBackward>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "1F1B: warm up, then alternate one forward and one backward (one stage per rank)",
             nullptr, nullptr, &create)
