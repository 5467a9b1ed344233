// GPipe (Huang et al., 2019; PyTorch's ScheduleGPipe): every rank runs the forwards of all
// microbatches, then their backwards in the same order. The simplest pipeline: its bubble is
// (r-1)/(m+r-1) of the step and every rank holds all m microbatches' activations at its peak,
// which is what 1F1B improves on.
#include <memory>

#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace {

constexpr char kName[] = "gpipe";

class GPipe final : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape& shape) const override {
    baton::check_schedule_shape_positive(kName, shape);
    baton::require_stages_per_rank(kName, shape, 1,
                                   "one stage per rank; use looped_bfs for several");
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kLoop, kName);
    for (int rank = 0; rank < shape.ranks; ++rank) {
      baton::RankProgram program(&plan.rank_steps[rank], plan.num_stages);
      for (int mb = 0; mb < shape.microbatches; ++mb) program.forward(rank);
      for (int mb = 0; mb < shape.microbatches; ++mb) program.backward(rank);
    }
    return plan;
  }
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<GPipe>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "GPipe: all forwards, then all backwards (one stage per rank)", nullptr, nullptr,
             &create)
