// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", 2024, section 6; PyTorch's
// ScheduleZBVZeroBubble): two stages per rank in "v" placement — rank k holds stage k on the way
// down and stage 2r-1-k on the way back — with the backward split into I and W. Because the
// last stage sits on rank 0 next to the first, the first gradient is ready as soon as the
// forward wave has gone down and come back, and the rank that waits longest at the start
// (rank r-1) is also the one that finishes first. Rank k:
//   warm-up   2(r-k)-1 forwards of its down stage; k pairs F(up) F(down); r-k triples
//             F(up) I(up) W(up), the up stage's backward starting right away;
//   steady    F(down) I(down) W(down) F(up) I(up) W(up), while forwards remain;
//   cool-down k pairs I(down) I(up) with Ws held back, then r-k pairs I(down) W(down), then
//             the held-back Ws.
// The steady state needs 2r-1 microbatches in flight, so a smaller count is planned as 2r-1 and
// the extra microbatches are dropped (which cannot create a deadlock). With F = I = W the
// bubble only comes from the warm-up and drain and vanishes as m grows.
#include <algorithm>
#include <memory>

#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace {

constexpr char kName[] = "zbv";

class ZeroBubbleV final : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape& shape) const override {
    baton::check_schedule_shape_positive(kName, shape);
    baton::require_stages_per_rank(kName, shape, 2,
                                   "exactly 2: one on the way down and one back up the \"v\"");
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kV, kName);
    const int r = shape.ranks;
    const int planned = std::max(2 * r - 1, shape.microbatches);
    for (int rank = 0; rank < r; ++rank) {
      baton::RankProgram program(&plan.rank_steps[rank], plan.num_stages);
      const int down = rank;
      const int up = 2 * r - 1 - rank;
      for (int i = 0; i < 2 * (r - rank) - 1; ++i) program.forward(down);
      for (int i = 0; i < rank; ++i) {
        program.forward(up);
        program.forward(down);
      }
      for (int i = 0; i < r - rank; ++i) {
        program.forward(up);
        program.backward_input(up);
        program.weight_of(up);
      }
      while (program.forwards_issued(up) < program.forwards_issued(down) ||
             program.forwards_issued(down) < planned) {
        if (program.forwards_issued(down) < planned) program.forward(down);
        program.backward_input(down);
        program.weight_of(down);
        program.forward(up);
        program.backward_input(up);
        program.weight_of(up);
      }
      for (int i = 0; i < rank; ++i) {
        program.backward_input(down);
        program.backward_input(up);
      }
      for (int i = 0; i < r - rank; ++i) {
        program.backward_input(down);
        program.weight_of(down);
      }
      while (program.weight_of(up)) {
      }
      while (program.weight_of(down)) {
      }
    }
    baton::drop_microbatches_from(&plan, shape.microbatches);
    return plan;
  }
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<ZeroBubbleV>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "ZB-V: zero-bubble schedule with I/W split over 2 stages per rank in \"v\" placement",
             nullptr, nullptr, &create)
