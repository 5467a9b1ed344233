// A schedule plugin that emits a wrong plan on purpose, one defect per `defect` value, to
// prove the core refuses it before any tensor moves (tests/sdk):
//   missing_microbatch  rank 1 never runs microbatch 1 (forward or backward)
//   w_before_i          a weight gradient W scheduled before its input gradient I
//   cycle               each rank's order is fine alone, but rank 0 waits for a gradient
//                       rank 1 only sends after a forward rank 0 has not sent yet
// Needs 2 ranks and 2 microbatches.
#include <string>

#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace {

const baton::ParamSpec kParams[] = {
    {"defect", baton::ParamType::kString, "cycle", "missing_microbatch, w_before_i or cycle."},
};

using baton::ActionType;
using baton::make_action;

class InvalidPlan : public baton::Schedule {
 public:
  explicit InvalidPlan(std::string defect) : defect_(std::move(defect)) {}

  void check(const baton::ScheduleShape& shape) const override {
    baton::require_schedule_constraint(
        shape.ranks == 2 && shape.microbatches == 2 && shape.stages_per_rank == 1,
        "test-invalid-plan", "2 ranks, 2 microbatches", "another shape");
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kLoop,
                                              "test-invalid-plan(" + defect_ + ")");
    auto& rank0 = plan.rank_steps[0];
    auto& rank1 = plan.rank_steps[1];
    if (defect_ == "missing_microbatch") {
      rank0 = {make_action(0, ActionType::kForward, 0), make_action(0, ActionType::kForward, 1),
               make_action(0, ActionType::kBackward, 0), make_action(0, ActionType::kBackward, 1)};
      rank1 = {make_action(1, ActionType::kForward, 0), make_action(1, ActionType::kBackward, 0)};
    } else if (defect_ == "w_before_i") {
      rank0 = {make_action(0, ActionType::kForward, 0), make_action(0, ActionType::kForward, 1),
               make_action(0, ActionType::kBackward, 0), make_action(0, ActionType::kBackward, 1)};
      rank1 = {make_action(1, ActionType::kForward, 0),
               make_action(1, ActionType::kBackwardWeight, 0),
               make_action(1, ActionType::kBackwardInput, 0),
               make_action(1, ActionType::kForward, 1), make_action(1, ActionType::kBackward, 1)};
    } else {
      rank0 = {make_action(0, ActionType::kForward, 0), make_action(0, ActionType::kBackward, 0),
               make_action(0, ActionType::kForward, 1), make_action(0, ActionType::kBackward, 1)};
      rank1 = {make_action(1, ActionType::kForward, 0), make_action(1, ActionType::kForward, 1),
               make_action(1, ActionType::kBackward, 0), make_action(1, ActionType::kBackward, 1)};
    }
    return plan;
  }

 private:
  std::string defect_;
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  return std::make_unique<InvalidPlan>(params.get_string("defect"));
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, "test-invalid-plan", "1.0.0",
             "Emits a wrong plan on purpose (tests only)", kParams, nullptr, &create)
