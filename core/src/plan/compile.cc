#include "baton/plan/compile.h"

#include "baton/error.h"
#include "baton/plan/lower.h"
#include "baton/plan/shape_limits.h"
#include "baton/plan/validate.h"

namespace baton {
namespace {

// A plugin that returns a plan for another shape than it was asked for is a plugin bug;
// say which number differs rather than failing somewhere in validation.
void check_plan_shape(const Plan& plan, const ScheduleShape& shape, const std::string& name) {
  auto mismatch = [&](const char* what, int got, int wanted) {
    throw PlanError("schedule '" + name + "' returned a plan with " + std::to_string(got) + " " +
                    what + ", but was asked for " + std::to_string(wanted) +
                    " (ranks=" + std::to_string(shape.ranks) +
                    ", stages_per_rank=" + std::to_string(shape.stages_per_rank) +
                    ", microbatches=" + std::to_string(shape.microbatches) + ")");
  };
  if (plan.num_ranks != shape.ranks) mismatch("ranks", plan.num_ranks, shape.ranks);
  if (static_cast<int>(plan.rank_steps.size()) != shape.ranks) {
    mismatch("rank rows", static_cast<int>(plan.rank_steps.size()), shape.ranks);
  }
  if (plan.num_stages != shape.num_stages())
    mismatch("stages", plan.num_stages, shape.num_stages());
  if (plan.num_microbatches != shape.microbatches) {
    mismatch("microbatches", plan.num_microbatches, shape.microbatches);
  }
}

}  // namespace

void check_shape_limits(const ScheduleShape& shape) {
  const std::int64_t units = std::int64_t{shape.ranks} * shape.stages_per_rank * shape.microbatches;
  if (shape.ranks < 1 || shape.ranks > kMaxRanks || shape.stages_per_rank < 1 ||
      shape.stages_per_rank > kMaxStagesPerRank || shape.microbatches < 1 ||
      shape.microbatches > kMaxMicrobatches || units > kMaxPlanUnits) {
    throw PlanError("cannot plan " + std::to_string(shape.ranks) + " ranks x " +
                    std::to_string(shape.stages_per_rank) + " stages per rank x " +
                    std::to_string(shape.microbatches) + " microbatches: baton plans 1.." +
                    std::to_string(kMaxRanks) + " ranks, 1.." + std::to_string(kMaxStagesPerRank) +
                    " stages per rank, 1.." + std::to_string(kMaxMicrobatches) +
                    " microbatches, and at most " + std::to_string(kMaxPlanUnits) +
                    " (stage, microbatch) pairs in all");
  }
}

CompiledPlan compile_schedule(const Schedule& schedule, const ScheduleShape& shape,
                              const std::string& schedule_name) {
  check_shape_limits(shape);
  schedule.check(shape);
  CompiledPlan compiled;
  compiled.compute = schedule.build(shape);
  if (compiled.compute.schedule_name.empty()) compiled.compute.schedule_name = schedule_name;
  check_plan_shape(compiled.compute, shape, schedule_name);
  if (compiled.compute.has_comms()) {
    validate_plan(compiled.compute);
    check_can_complete(compiled.compute);
    compiled.lowered = compiled.compute;
  } else {
    compiled.lowered = lower(compiled.compute);  // validates first
  }
  return compiled;
}

}  // namespace baton
