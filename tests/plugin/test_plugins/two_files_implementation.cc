// The implementation of test-two-files: a one-stage-per-rank GPipe order, named so that the
// test can tell it was this library that built it.
#include "baton/plugin_implementation.h"
#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace {

class TwoFilesSchedule : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape&) const override {}

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kLoop,
                                              "built by the implementation library");
    for (int pass = 0; pass < 2; ++pass) {  // every forward, then every backward in reverse
      for (int i = 0; i < plan.num_stages; ++i) {
        const int stage = pass == 0 ? i : plan.num_stages - 1 - i;
        for (int mb = 0; mb < shape.microbatches; ++mb) {
          plan.rank_steps[plan.stage_to_rank[stage]].push_back(baton::make_action(
              stage, pass == 0 ? baton::ActionType::kForward : baton::ActionType::kBackward, mb));
        }
      }
    }
    return plan;
  }
};

std::unique_ptr<baton::PluginObject> make_schedule(const baton::ParamValues&) {
  return std::make_unique<TwoFilesSchedule>();
}

}  // namespace

BATON_PLUGIN_IMPLEMENTATION(&make_schedule)
