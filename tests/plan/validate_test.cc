#include "baton/plan/validate.h"

#include <gtest/gtest.h>

#include <string>

#include "baton/error.h"
#include "baton/plan/lower.h"
#include "plan_builders.h"

namespace baton {
namespace {

using testing::plan_from_text;

// The message validate_plan throws; fails the test when it does not throw.
std::string validation_error(const Plan& plan) {
  try {
    validate_plan(plan);
  } catch (const PlanError& error) {
    return error.what();
  }
  ADD_FAILURE() << "plan passed validation";
  return {};
}

// Expects exactly one issue at (rank, step) whose message contains `fragment`.
void expect_single_issue(const Plan& plan, int rank, int step, const std::string& fragment) {
  const std::vector<PlanIssue> issues = find_plan_issues(plan);
  ASSERT_EQ(issues.size(), 1u) << describe_plan_issues(plan, issues);
  EXPECT_EQ(issues[0].rank, rank) << issues[0].message;
  EXPECT_EQ(issues[0].step, step) << issues[0].message;
  EXPECT_NE(issues[0].message.find(fragment), std::string::npos) << issues[0].message;
}

Plan two_rank_plan(std::vector<std::string> rank0, std::vector<std::string> rank1,
                   int microbatches = 2) {
  return plan_from_text(2, microbatches, Placement::kLoop, {rank0, rank1});
}

TEST(ValidateTest, TextbookSchedulesAreValid) {
  EXPECT_TRUE(find_plan_issues(testing::gpipe_plan(4, 8)).empty());
  EXPECT_TRUE(find_plan_issues(testing::gpipe_plan(3, 2, /*split_backward=*/true)).empty());
  EXPECT_TRUE(find_plan_issues(testing::one_f_one_b_plan(4, 8)).empty());
  EXPECT_TRUE(find_plan_issues(testing::interleaved_1f1b_plan(4, 2, 8)).empty());
  EXPECT_TRUE(find_plan_issues(testing::v_gpipe_plan(2, 3)).empty());
  EXPECT_TRUE(find_plan_issues(lower(testing::one_f_one_b_plan(4, 8))).empty());
  EXPECT_NO_THROW(validate_plan(testing::one_f_one_b_plan(2, 2)));
}

TEST(ValidateTest, ThrownMessageNamesRankStepActionAndMarksTheTable) {
  const Plan plan =
      two_rank_plan({"0F0", "0F1", "0F0", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1B1"});
  const std::string message = validation_error(plan);
  EXPECT_EQ(message.rfind("invalid plan \"test\" (2 ranks, 2 stages, 2 microbatches): rank 0, "
                          "step 2, action 0F0: 0F0 appears 2 times (rank 0 step 0 and rank 0 step "
                          "2); it must run exactly once\n",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("        Rank 0 Rank 1\n"), std::string::npos) << message;
  EXPECT_NE(message.find("Step 2: 0F0    1F1    <-- ERROR HERE (rank 0)\n"), std::string::npos)
      << message;
}

TEST(ValidateTest, MissingForward) {
  const Plan plan = two_rank_plan({"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1B1"});
  expect_single_issue(plan, 1, -1,
                      "stage 1 never runs F for microbatch 1 (expected 1F1 on rank 1)");
  // A step-less issue has nothing to point at, so the table carries no marker.
  EXPECT_EQ(validation_error(plan).find("ERROR HERE"), std::string::npos);
}

TEST(ValidateTest, MissingBackward) {
  expect_single_issue(two_rank_plan({"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1"}), 1, -1,
                      "stage 1 never runs a backward for microbatch 1 (expected 1B1, or 1I1 and "
                      "1W1 on rank 1)");
}

TEST(ValidateTest, BackwardTwice) {
  expect_single_issue(
      two_rank_plan({"0F0", "0F1", "0B0", "0B1", "0B1"}, {"1F0", "1B0", "1F1", "1B1"}), 0, 4,
      "0B1 appears 2 times (rank 0 step 3 and rank 0 step 4)");
}

TEST(ValidateTest, MixingFullAndSplitBackward) {
  expect_single_issue(
      two_rank_plan({"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1B1", "1I1", "1W1"}), 1, 4,
      "stage 1 mixes the full backward 1B1 with the split backward (1I1/1W1) for microbatch 1; use "
      "either 1B1 or 1I1 and 1W1");
}

TEST(ValidateTest, SplitBackwardNeedsBothHalves) {
  expect_single_issue(two_rank_plan({"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1I1"}), 1,
                      3, "1I1 has no matching 1W1");
  expect_single_issue(two_rank_plan({"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1W1"}), 1,
                      3, "1W1 has no matching 1I1");
}

TEST(ValidateTest, WeightGradientBeforeItsInputGradient) {
  expect_single_issue(
      two_rank_plan({"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1W1", "1I1"}), 1, 3,
      "1W1 runs before 1I1 (step 4) on rank 1; the weight gradient W runs after its input "
      "gradient I");
}

TEST(ValidateTest, BackwardBeforeItsForward) {
  expect_single_issue(two_rank_plan({"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1B1", "1F1"}), 1,
                      2,
                      "1B1 runs before 1F1 (step 3) on rank 1; a backward needs the activations of "
                      "its forward");
  expect_single_issue(
      two_rank_plan({"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1I0", "1W0", "1I1", "1F1", "1W1"}), 1, 3,
      "1I1 runs before 1F1 (step 4)");
}

TEST(ValidateTest, SameRankForwardOrder) {
  const Plan plan =
      plan_from_text(2, 1, Placement::kCustom, {{"1F0", "0F0", "1B0", "0B0"}}, {0, 0});
  expect_single_issue(plan, 0, 0,
                      "1F0 runs before 0F0 (step 1) on rank 0; it consumes the output of the "
                      "previous stage");
}

TEST(ValidateTest, SameRankBackwardOrder) {
  const Plan plan =
      plan_from_text(2, 1, Placement::kCustom, {{"0F0", "1F0", "0B0", "1B0"}}, {0, 0});
  expect_single_issue(plan, 0, 2,
                      "0B0 runs before 1B0 (step 3) on rank 0; it consumes the gradient of the "
                      "next stage");
}

TEST(ValidateTest, ActionOnTheWrongRank) {
  expect_single_issue(two_rank_plan({"0F0", "0F1", "1F1", "0B0", "0B1"}, {"1F0", "1B0", "1B1"}), 0,
                      2, "1F1 runs on rank 0, but stage 1 is placed on rank 1 (placement loop)");
}

TEST(ValidateTest, StageAndMicrobatchOutOfRange) {
  const Plan plan =
      two_rank_plan({"0F0", "0F1", "0B0", "0B1", "2F0"}, {"1F0", "1B0", "1F1", "1B1", "1F2"});
  const std::vector<PlanIssue> issues = find_plan_issues(plan);
  ASSERT_EQ(issues.size(), 2u) << describe_plan_issues(plan, issues);
  EXPECT_EQ(issues[0].rank, 0);
  EXPECT_EQ(issues[0].step, 4);
  EXPECT_EQ(issues[0].action, "2F0");
  EXPECT_EQ(issues[0].message, "2F0 names stage 2, but the plan has 2 stages (0..1)");
  EXPECT_EQ(issues[1].rank, 1);
  EXPECT_EQ(issues[1].message, "1F2 names microbatch 2, but the plan has 2 microbatches (0..1)");
}

TEST(ValidateTest, OverlapCountsAsItsParts) {
  // One stage on one rank: the pair supplies 0F1 and 0B0.
  const Plan valid =
      plan_from_text(1, 2, Placement::kLoop, {{"0F0", "(0F1;0B0)OVERLAP_F_B", "0B1"}});
  EXPECT_TRUE(find_plan_issues(valid).empty());
  const Plan same_microbatch =
      plan_from_text(1, 2, Placement::kLoop, {{"0F0", "0B0", "(0F1;0B1)OVERLAP_F_B"}});
  expect_single_issue(same_microbatch, 0, 2, "0B1 runs in the same step as 0F1 (step 2)");
}

TEST(ValidateTest, ShapeProblemsStopFurtherChecks) {
  Plan plan = testing::one_f_one_b_plan(2, 2);
  plan.stage_to_rank = {0, 5};
  const std::vector<PlanIssue> issues = find_plan_issues(plan);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].rank, -1);
  EXPECT_EQ(issues[0].message,
            "stage 1 is placed on rank 5, which does not exist (the plan has 2 ranks)");
  plan.stage_to_rank = {0};
  EXPECT_NE(validation_error(plan).find("plan: stage_to_rank places 1 stages but num_stages is 2"),
            std::string::npos);
  plan = testing::one_f_one_b_plan(2, 2);
  plan.num_microbatches = 1 << 30;
  EXPECT_NE(validation_error(plan).find("too large to check: 2 ranks, 2 stages x 1073741824 "
                                        "microbatches (limits: 16384 ranks, 65536 microbatches, "
                                        "1048576 stage-microbatch pairs)"),
            std::string::npos);
  // Under the old bound of 2^24 pairs, yet 2 GB of tables: refused by the shape limits.
  plan = testing::one_f_one_b_plan(2, 2);
  plan.num_stages = 256;
  plan.num_microbatches = 65536;
  EXPECT_NE(validation_error(plan).find("too large to check"), std::string::npos);
}

TEST(ValidateTest, ReportsAllIssuesEarliestStepFirst) {
  const Plan plan = two_rank_plan({"0F1", "0B0", "0B1", "0F0"}, {"1F0", "1B0", "1F1"});
  const std::vector<PlanIssue> issues = find_plan_issues(plan);
  ASSERT_EQ(issues.size(), 2u) << describe_plan_issues(plan, issues);
  EXPECT_EQ(issues[0].step, 1);
  EXPECT_EQ(issues[0].message.rfind("0B0 runs before 0F0 (step 3)", 0), 0u) << issues[0].message;
  EXPECT_EQ(issues[1].step, -1);
  EXPECT_EQ(issues[1].message.rfind("stage 1 never runs a backward for microbatch 1", 0), 0u);
  const std::string message = describe_plan_issues(plan, issues);
  EXPECT_NE(message.find("\n1 more problem:\n  rank 1: stage 1 never runs a backward"),
            std::string::npos)
      << message;
}

// A lowered 2-rank, 1-microbatch plan with one cell replaced.
Plan lowered_with(int rank, int step, const std::string& replacement) {
  std::vector<std::vector<std::string>> cells = {{"0F0", "0SEND_F0", "0RECV_B0", "0B0"},
                                                 {"1RECV_F0", "1F0", "1B0", "1SEND_B0"}};
  cells[rank][step] = replacement;
  return plan_from_text(2, 1, Placement::kLoop, cells);
}

TEST(ValidateTest, LoweredPlanCommsMustPairUp) {
  EXPECT_TRUE(find_plan_issues(lowered_with(0, 0, "0F0")).empty());
  expect_single_issue(lowered_with(1, 0, ""), 0, 1, "0SEND_F0 has no matching 1RECV_F0 on rank 1");
  expect_single_issue(lowered_with(0, 2, ""), 1, 3, "1SEND_B0 has no matching 0RECV_B0 on rank 0");
}

TEST(ValidateTest, LoweredPlanNeedsCommAcrossEveryRankBoundary) {
  Plan plan = lowered_with(1, 0, "");
  plan.rank_steps[0][1] = std::nullopt;
  expect_single_issue(plan, 1, 1,
                      "microbatch 0 crosses from stage 0 (rank 0) to stage 1 (rank 1) without "
                      "0SEND_F0 and 1RECV_F0");
}

TEST(ValidateTest, LoweredPlanCommOrderAgainstCompute) {
  Plan send_first = plan_from_text(
      2, 1, Placement::kLoop,
      {{"0SEND_F0", "0F0", "0RECV_B0", "0B0"}, {"1RECV_F0", "1F0", "1B0", "1SEND_B0"}});
  expect_single_issue(send_first, 0, 0,
                      "0SEND_F0 runs before 0F0 (step 1) on rank 0; it sends what that action "
                      "produces");
  Plan recv_late = plan_from_text(
      2, 1, Placement::kLoop,
      {{"0F0", "0SEND_F0", "0B0", "0RECV_B0"}, {"1RECV_F0", "1F0", "1B0", "1SEND_B0"}});
  expect_single_issue(recv_late, 0, 2,
                      "0B0 runs before 0RECV_B0 (step 3) on rank 0; it needs the data this RECV "
                      "brings");
}

TEST(ValidateTest, CommBetweenSameRankStagesIsRejected) {
  const Plan plan =
      plan_from_text(2, 1, Placement::kCustom, {{"0F0", "0SEND_F0", "1F0", "1B0", "0B0"}}, {0, 0});
  expect_single_issue(plan, 0, 1,
                      "0SEND_F0 joins stages 0 and 1, which are both on rank 0; stages on one "
                      "rank pass tensors locally");
}

TEST(ValidateTest, CommWithoutPeerStage) {
  const Plan plan = lowered_with(1, 3, "1SEND_F0");
  const std::vector<PlanIssue> issues = find_plan_issues(plan);
  ASSERT_FALSE(issues.empty());
  bool found = false;
  for (const PlanIssue& issue : issues) {
    found |= issue.message == "1SEND_F0 has no peer: stage 2 does not exist";
  }
  EXPECT_TRUE(found) << describe_plan_issues(plan, issues);
}

}  // namespace
}  // namespace baton
