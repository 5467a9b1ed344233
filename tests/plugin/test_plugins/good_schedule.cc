// A well-formed schedule plugin: every stage runs its forwards, then its backwards in
// reverse (GPipe order). Used to prove loading, parameters and the factory work.
#include "baton/schedule.h"

namespace {

const baton::ParamSpec kParams[] = {
    {"depth", baton::ParamType::kInt, "2", "A parameter the tests read back."},
    {"label", baton::ParamType::kString, nullptr, "A required parameter."},
};

class TestSchedule : public baton::Schedule {
 public:
  explicit TestSchedule(const baton::ParamValues& params)
      : depth_(static_cast<int>(params.get_int("depth"))) {}

  void check(const baton::ScheduleShape&) const override {}

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan;
    plan.num_ranks = shape.ranks;
    plan.num_stages = shape.num_stages();
    plan.num_microbatches = shape.microbatches;
    plan.stage_to_rank = baton::place_stages(baton::Placement::kLoop, shape.ranks, plan.num_stages);
    plan.rank_steps.resize(shape.ranks);
    for (int stage = 0; stage < plan.num_stages; ++stage) {
      auto& steps = plan.rank_steps[plan.stage_to_rank[stage]];
      for (int mb = 0; mb < shape.microbatches; ++mb) {
        steps.push_back(baton::Action{stage, baton::ActionType::kForward, mb, {}});
      }
    }
    for (int stage = plan.num_stages - 1; stage >= 0; --stage) {
      auto& steps = plan.rank_steps[plan.stage_to_rank[stage]];
      for (int mb = 0; mb < shape.microbatches; ++mb) {
        steps.push_back(baton::Action{stage, baton::ActionType::kBackward, mb, {}});
      }
    }
    plan.schedule_name = "test-good(depth=" + std::to_string(depth_) + ")";
    return plan;
  }

 private:
  int depth_;
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  return std::make_unique<TestSchedule>(params);
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, "test-good", "1.2.3", "A schedule for the tests",
             kParams, nullptr, &create)
