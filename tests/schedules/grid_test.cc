// Every built-in schedule over the whole grid of ranks 1-8, stages per rank 1-4 and microbatches
// 1-64: a shape inside the schedule's documented constraints must give a plan that validates,
// lowers and simulates to the end (no deadlock); a shape outside them must be refused by check()
// with a ConfigError. One test case per schedule keeps each well inside CTest's timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <string>

#include "baton/error.h"
#include "baton/plan/lower.h"
#include "baton/plan/simulate.h"
#include "baton/plan/validate.h"
#include "schedule_fixture.h"

namespace baton {
namespace testing {
namespace {

constexpr int kMaxRanks = 8;
constexpr int kMaxStagesPerRank = 4;
constexpr int kMaxMicrobatches = 64;
constexpr int kMaxReportedFailures = 10;

// Returns an empty string when `shape` plans correctly, else what went wrong.
std::string plan_problem(const ScheduleSpec& spec, const Schedule& schedule,
                         const ScheduleShape& shape) {
  try {
    schedule.check(shape);
  } catch (const ConfigError& error) {
    return spec.accepts(shape) ? std::string("check() refused an allowed shape: ") + error.what()
                               : std::string();
  }
  if (!spec.accepts(shape)) return "check() accepted a shape outside the constraints";

  try {
    const Plan plan = schedule.build(shape);
    if (plan.schedule_name != spec.name) return "schedule_name is \"" + plan.schedule_name + "\"";
    if (plan.num_ranks != shape.ranks || plan.num_stages != shape.num_stages() ||
        plan.num_microbatches != shape.microbatches) {
      return "the plan's shape differs from the one asked for";
    }
    if (plan.placement != spec.placement ||
        plan.stage_to_rank != place_stages(spec.placement, shape.ranks, shape.num_stages())) {
      return "unexpected placement " + std::string(placement_name(plan.placement));
    }
    validate_plan(plan);
    const Plan lowered = lower(plan);  // includes the completion (deadlock) check
    const SimulationResult result = simulate(lowered);
    // Every (stage, microbatch) costs F + B = 3 units with the default costs, split or not.
    double busy = 0.0;
    for (const RankStatistics& rank : result.ranks) busy += rank.busy_time;
    const double expected = 3.0 * shape.num_stages() * shape.microbatches;
    if (std::abs(busy - expected) > 1e-6) {
      return "simulated work is " + std::to_string(busy) + ", expected " + std::to_string(expected);
    }
  } catch (const std::exception& error) {
    return error.what();
  }
  return {};
}

class ScheduleGrid : public ::testing::TestWithParam<ScheduleSpec> {};

TEST_P(ScheduleGrid, EveryShapePlansWithoutDeadlockOrIsRefused) {
  const ScheduleSpec& spec = GetParam();
  const LoadedSchedule schedule = load_schedule(spec.name);
  const auto started = std::chrono::steady_clock::now();
  int planned = 0;
  int refused = 0;
  int failures = 0;
  for (int ranks = 1; ranks <= kMaxRanks; ++ranks) {
    for (int per_rank = 1; per_rank <= kMaxStagesPerRank; ++per_rank) {
      for (int microbatches = 1; microbatches <= kMaxMicrobatches; ++microbatches) {
        const ScheduleShape shape{ranks, per_rank, microbatches};
        const std::string problem = plan_problem(spec, *schedule.schedule, shape);
        if (!problem.empty()) {
          if (++failures <= kMaxReportedFailures) {
            ADD_FAILURE() << spec.name << " " << shape_text(shape) << ": " << problem;
          }
          continue;
        }
        ++(spec.accepts(shape) ? planned : refused);
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(failures, 0);
  EXPECT_GT(planned, 0) << "the grid never exercised " << spec.name;
  std::printf("%s: %d shapes planned, %d refused, %.1f s\n", spec.name.c_str(), planned, refused,
              seconds);
}

INSTANTIATE_TEST_SUITE_P(BuiltIn, ScheduleGrid, ::testing::ValuesIn(built_in_schedules()),
                         spec_name);

}  // namespace
}  // namespace testing
}  // namespace baton
