// REDUCE_GRAD in plans (data parallelism): where the pass puts it, what the validator refuses,
// and what the simulator charges for it. Expected times are worked out by hand from the
// execution model in simulate.h.
#include "baton/plan/gradient_reduction.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/plan/lower.h"
#include "baton/plan/measured_costs.h"
#include "baton/plan/simulate.h"
#include "baton/plan/validate.h"
#include "plan_builders.h"

namespace baton {
namespace {

using testing::gpipe_plan;
using testing::one_f_one_b_plan;
using testing::plan_from_text;
using testing::plan_text;

using Rows = std::vector<std::vector<std::string>>;

// One rank holding both stages: stage 1's gradients are complete before stage 0's backward.
Plan one_rank_two_stages() {
  return plan_from_text(2, 1, Placement::kLoop, {{"0F0", "1F0", "1B0", "0B0"}});
}

std::string first_issue(const Plan& plan) {
  const std::vector<PlanIssue> issues = find_plan_issues(plan);
  if (issues.empty()) return "no issue";
  return issues.front().message;
}

TEST(GradientReductionTest, GoesRightAfterEachStagesLastBackward) {
  const Plan reduced = add_gradient_reduction(one_rank_two_stages());
  EXPECT_EQ(plan_text(reduced),
            (Rows{{"0F0", "1F0", "1B0", "1REDUCE_GRAD", "0B0", "0REDUCE_GRAD"}}));
  EXPECT_TRUE(find_plan_issues(reduced).empty()) << first_issue(reduced);
  EXPECT_TRUE(reduces_gradients(reduced));
  EXPECT_FALSE(reduces_gradients(one_rank_two_stages()));
}

TEST(GradientReductionTest, AfterTheLastWWhenTheBackwardIsSplit) {
  const Plan reduced = add_gradient_reduction(gpipe_plan(2, 2, /*split_backward=*/true));
  for (const auto& row : plan_text(reduced)) {
    ASSERT_GE(row.size(), 2u);
    EXPECT_NE(row.back().find("REDUCE_GRAD"), std::string::npos);
    EXPECT_NE(row[row.size() - 2].find("W1"), std::string::npos) << row[row.size() - 2];
  }
  EXPECT_TRUE(find_plan_issues(reduced).empty()) << first_issue(reduced);
}

TEST(GradientReductionTest, ALoweredPlanReducesAfterTheSendsOfItsLastBackward) {
  const CompiledPlan compiled{one_f_one_b_plan(2, 2), lower(one_f_one_b_plan(2, 2))};
  const CompiledPlan reduced = with_gradient_reduction(compiled);
  const Rows lowered = plan_text(reduced.lowered);
  // Rank 1 ends with 1B1 then 1SEND_B1: the previous rank's last backward is not held up.
  ASSERT_GE(lowered[1].size(), 3u);
  EXPECT_EQ(lowered[1][lowered[1].size() - 3], "1B1");
  EXPECT_EQ(lowered[1][lowered[1].size() - 2], "1SEND_B1");
  EXPECT_EQ(lowered[1].back(), "1REDUCE_GRAD");
  EXPECT_EQ(lowered[0].back(), "0REDUCE_GRAD");
  EXPECT_EQ(plan_text(reduced.compute)[0].back(), "0REDUCE_GRAD");
}

TEST(GradientReductionTest, APlanThatAlreadyReducesIsRefused) {
  const Plan reduced = add_gradient_reduction(one_rank_two_stages());
  try {
    add_gradient_reduction(reduced);
    FAIL() << "no error";
  } catch (const PlanError& error) {
    EXPECT_NE(std::string(error.what()).find("already reduces gradients"), std::string::npos);
  }
}

TEST(GradientReductionTest, ValidatorRefusesAReductionBeforeTheLastBackward) {
  const Plan plan =
      plan_from_text(1, 2, Placement::kLoop, {{"0F0", "0F1", "0B0", "0REDUCE_GRAD", "0B1"}});
  EXPECT_EQ(first_issue(plan),
            "0REDUCE_GRAD runs before 0B1 (step 4); the gradients are reduced after the stage's "
            "last backward");
}

TEST(GradientReductionTest, ValidatorRefusesTwoReductionsOfOneStage) {
  const Plan plan =
      plan_from_text(1, 1, Placement::kLoop, {{"0F0", "0B0", "0REDUCE_GRAD", "0REDUCE_GRAD"}});
  EXPECT_NE(first_issue(plan).find("0REDUCE_GRAD appears 2 times"), std::string::npos)
      << first_issue(plan);
}

TEST(GradientReductionTest, ValidatorRefusesAPlanWhereOnlySomeStagesReduce) {
  const Plan plan =
      plan_from_text(2, 1, Placement::kLoop, {{"0F0", "1F0", "1B0", "1REDUCE_GRAD", "0B0"}});
  EXPECT_NE(first_issue(plan).find("stage 0 never reduces its gradients"), std::string::npos)
      << first_issue(plan);
}

// F=1, B=2. 0F0 [0,1], 1F0 [1,2], 1B0 [2,4], 1REDUCE_GRAD posted at 4, 0B0 [4,6], 0REDUCE_GRAD
// posted at 6; a rank's reductions run one at a time.
TEST(GradientReductionTest, SimulatorOverlapsAReductionWithTheWorkLeft) {
  const Plan reduced = add_gradient_reduction(one_rank_two_stages());
  SimulationCosts costs;
  costs.reduce_grad = 1.0;  // 1's [4,5] hides under 0B0; 0's [6,7] is exposed
  SimulationResult result = simulate(reduced, costs);
  EXPECT_DOUBLE_EQ(result.makespan, 7.0);
  EXPECT_DOUBLE_EQ(result.ranks[0].reduce_time, 2.0);
  EXPECT_DOUBLE_EQ(result.ranks[0].exposed_reduce_time, 1.0);

  costs.reduce_grad = 3.0;  // 1's [4,7], then 0's waits for the link: [7,10]
  result = simulate(reduced, costs);
  EXPECT_DOUBLE_EQ(result.makespan, 10.0);
  EXPECT_DOUBLE_EQ(result.ranks[0].exposed_reduce_time, 4.0);
  bool found = false;
  for (const TimelineEntry& entry : result.timeline) {
    if (entry.action.type != ActionType::kReduceGrad || entry.action.stage != 0) continue;
    found = true;
    EXPECT_DOUBLE_EQ(entry.start, 7.0);
    EXPECT_DOUBLE_EQ(entry.end, 10.0);
  }
  EXPECT_TRUE(found);
}

// Per-stage costs replace the uniform one; a plan without reductions is unchanged by them.
TEST(GradientReductionTest, SimulatorTakesEachStagesOwnReductionTime) {
  MeasuredCosts costs;
  costs.stages.resize(2);
  costs.stages[0].reduce_grad = 0.5;
  costs.stages[1].reduce_grad = 4.0;  // [4,8], then stage 0's [8,8.5]
  EXPECT_DOUBLE_EQ(simulate(add_gradient_reduction(one_rank_two_stages()), costs).makespan, 8.5);
  EXPECT_DOUBLE_EQ(simulate(one_rank_two_stages(), costs).makespan, 6.0);
}

}  // namespace
}  // namespace baton
