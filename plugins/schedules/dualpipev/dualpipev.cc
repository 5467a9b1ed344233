// DualPipeV (DeepSeek-V3 report, 2024, and deepseek-ai/DualPipe; PyTorch's ScheduleDualPipeV):
// DualPipe folded onto half the ranks — two stages per rank in "v" placement, so rank k holds
// stage k (down) and stage 2r-1-k (up). In the steady state every rank pairs the forward of one
// of its stages with the backward of the other as one OVERLAP_F_B action: the two run on
// different microbatches and in opposite directions, so the runtime can hide one's
// communication (expert all-to-all in DeepSeek's case, point-to-point here) behind the other's
// compute. Rank k:
//   1. 2(r-k-1) forwards of the down stage;
//   2. k+1 pairs F(down) F(up);
//   3. r-k-1 times I(up) W F(up), zero-bubble style;
//   4. m-2r+k+1 times (F(down);B(up)) then (F(up);B(down)) — the main phase (the last rank runs
//      its very first pair one after the other: that B(up) waits for the first gradient to come
//      back, and a pair starts only when both halves can, which would hold the forward wave);
//   5. r-k-1 times B(up) then (F(up);B(down));
//   6. k+1 pairs B(up) B(down), switching to I (W deferred) halfway through;
//   7. r-k-1 times W then the backward of the down stage;
//   8. the remaining Ws.
// Each stage gets m forwards whatever k is, as long as step 4 does not go negative (m >= 2r-1);
// like PyTorch, the schedule asks for at least one microbatch per stage, m >= 2r.
#include <memory>

#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace {

constexpr char kName[] = "dualpipev";

class DualPipeV final : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape& shape) const override {
    baton::check_schedule_shape_positive(kName, shape);
    baton::require_stages_per_rank(kName, shape, 2,
                                   "exactly 2: one on the way down and one back up the \"v\"");
    baton::require_schedule_constraint(
        shape.microbatches >= shape.num_stages(), kName,
        "microbatches >= 2 x ranks (the number of stages)",
        baton::format_count(shape.microbatches, "microbatch", "microbatches") + " for " +
            baton::format_count(shape.ranks, "rank", "ranks") + " (" +
            std::to_string(shape.num_stages()) + " stages)");
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kV, kName);
    const int r = shape.ranks;
    const int m = shape.microbatches;
    for (int rank = 0; rank < r; ++rank) {
      baton::RankProgram program(&plan.rank_steps[rank], plan.num_stages);
      const int down = rank;
      const int up = 2 * r - 1 - rank;
      const int hops_to_end = r - rank - 1;

      for (int i = 0; i < 2 * hops_to_end; ++i) program.forward(down);
      for (int i = 0; i < rank + 1; ++i) {
        program.forward(down);
        program.forward(up);
      }
      for (int i = 0; i < hops_to_end; ++i) {
        program.backward_input(up);
        program.weight();
        program.forward(up);
      }
      for (int i = 0; i < m - 2 * r + rank + 1; ++i) {
        if (i == 0 && rank == r - 1) {
          program.forward(down);
          program.backward(up);
        } else {
          program.overlap(down, up);
        }
        program.overlap(up, down);
      }
      for (int i = 0; i < hops_to_end; ++i) {
        program.backward(up);
        program.overlap(up, down);
      }
      // Halfway through the drain, backwards become I so their Ws can fill the tail bubble;
      // odd ranks switch one action earlier than even ones, as in DualPipe.
      bool split = false;
      auto drain_backward = [&](int stage) {
        if (split) {
          program.backward_input(stage);
        } else {
          program.backward(stage);
        }
      };
      for (int i = 0; i < rank + 1; ++i) {
        if (i == (rank + 1) / 2 && rank % 2 == 1) split = true;
        drain_backward(up);
        if (i == (rank + 1) / 2 && rank % 2 == 0) split = true;
        drain_backward(down);
      }
      for (int i = 0; i < hops_to_end; ++i) {
        program.weight();
        drain_backward(down);
      }
      while (program.weight()) {
      }
    }
    return plan;
  }
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<DualPipeV>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "DualPipeV: forward and backward of the two \"v\" stages overlapped in pairs "
             "(2 stages per rank)",
             nullptr, nullptr, &create)
