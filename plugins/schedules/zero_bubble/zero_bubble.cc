// Zero bubble (Qi et al., "Zero Bubble Pipeline Parallelism", 2024). The backward is split into
// I (gradient of the stage input, which the previous stage waits for) and W (gradient of the
// weights, which nobody waits for), and Ws are deferred into the gaps 1F1B leaves:
//  * one stage per rank: ZB-H1, a 1F1B order with I instead of B where rank k holds back k Ws.
//    With F = I = W its bubble is a third of 1F1B's, at 1F1B's peak memory;
//  * several stages per rank: ZB1P, PyTorch's ScheduleInterleavedZeroBubble — the interleaved
//    1F1B order (loop placement, depth first) with the same I/W split and W deferral, and a
//    warm-up of one forward per hop since only I sits on the gradient's path.
// With F = I = W both leave a third of the bubble of their full-backward counterpart. Any shape
// works; see depth_first.h for the order.
#include <memory>

#include "baton/schedule.h"
#include "baton/schedule_support.h"
#include "depth_first.h"

namespace {

constexpr char kName[] = "zero_bubble";

class ZeroBubble final : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape& shape) const override {
    baton::check_schedule_shape_positive(kName, shape);
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kLoop, kName);
    baton::depth_first::Options options;
    options.warmup_per_hop = 1;
    options.split_backward = true;
    for (int rank = 0; rank < shape.ranks; ++rank) {
      baton::RankProgram program(&plan.rank_steps[rank], plan.num_stages);
      baton::depth_first::append_rank_order(shape, rank, options, &program);
    }
    return plan;
  }
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<ZeroBubble>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "Zero bubble: 1F1B with the backward split into I and W, Ws filling the bubble "
             "(ZB-H1; ZB1P with several stages per rank)",
             nullptr, nullptr, &create)
