// Breadth-first looping (Lamy-Poirier, "Breadth-First Pipeline Parallelism", 2023; PyTorch's
// ScheduleLoopedBFS): stages are placed in a loop (stage s on rank s % r) and each rank finishes
// a stage for every microbatch before moving to its next stage — all forwards of its first
// stage, then of its second, ..., then the backwards in reverse stage order, last microbatch
// first. Looping shrinks the bubble like interleaving does (to (r-1)/(v*m+r-1) of the step with
// v stages per rank once m >= r), and running a stage for all microbatches at once suits
// sharded data parallelism (one unshard per stage); the price is memory: every rank holds all
// v*m activations at its peak, like GPipe.
#include <memory>
#include <vector>

#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace {

constexpr char kName[] = "looped_bfs";

class LoopedBreadthFirst final : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape& shape) const override {
    baton::check_schedule_shape_positive(kName, shape);
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kLoop, kName);
    for (int rank = 0; rank < shape.ranks; ++rank) {
      std::vector<baton::PlanSlot>& steps = plan.rank_steps[rank];
      const std::vector<int> stages = baton::stages_of_rank(plan, rank);
      for (int stage : stages) {
        for (int mb = 0; mb < shape.microbatches; ++mb) {
          steps.push_back(baton::make_action(stage, baton::ActionType::kForward, mb));
        }
      }
      // Last microbatch first: its forward just finished on the last stage, so the backward
      // wave starts without waiting for anything older.
      for (auto stage = stages.rbegin(); stage != stages.rend(); ++stage) {
        for (int mb = shape.microbatches - 1; mb >= 0; --mb) {
          steps.push_back(baton::make_action(*stage, baton::ActionType::kBackward, mb));
        }
      }
    }
    return plan;
  }
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<LoopedBreadthFirst>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "Looped BFS: each rank runs a stage for all microbatches before its next stage "
             "(loop placement, any stages per rank)",
             nullptr, nullptr, &create)
