#include "baton/plan/lower.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/plan/validate.h"
#include "plan_builders.h"

namespace baton {
namespace {

using testing::plan_from_text;
using testing::plan_text;
using Rows = std::vector<std::vector<std::string>>;

std::string lower_error(const Plan& plan) {
  try {
    lower(plan);
  } catch (const PlanError& error) {
    return error.what();
  }
  ADD_FAILURE() << "lower did not throw";
  return {};
}

TEST(LowerTest, TwoRankOneFOneB) {
  const Plan lowered = lower(testing::one_f_one_b_plan(2, 2));
  EXPECT_EQ(plan_text(lowered),
            (Rows{{"0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0B0", "0RECV_B1", "0B1"},
                  {"1RECV_F0", "1F0", "1B0", "1SEND_B0", "1RECV_F1", "1F1", "1B1", "1SEND_B1"}}));
  EXPECT_EQ(lowered.num_ranks, 2);
  EXPECT_EQ(lowered.stage_to_rank, (std::vector<int>{0, 1}));
  EXPECT_EQ(lowered.schedule_name, "1F1B");
  EXPECT_TRUE(find_plan_issues(lowered).empty());
}

TEST(LowerTest, FourRankOneFOneB) {
  const Plan lowered = lower(testing::one_f_one_b_plan(4, 4));
  const Rows text = plan_text(lowered);
  EXPECT_EQ(text[1], (std::vector<std::string>{
                         "1RECV_F0", "1F0", "1SEND_F0", "1RECV_F1", "1F1", "1SEND_F1",
                         "1RECV_F2", "1F2", "1SEND_F2", "1RECV_B0", "1B0", "1SEND_B0",
                         "1RECV_F3", "1F3", "1SEND_F3", "1RECV_B1", "1B1", "1SEND_B1",
                         "1RECV_B2", "1B2", "1SEND_B2", "1RECV_B3", "1B3", "1SEND_B3"}));
  // First and last ranks talk in one direction per pass only.
  EXPECT_EQ(text[0].size(), 16u);  // 4 F + 4 SEND_F + 4 RECV_B + 4 B
  EXPECT_EQ(text[3].size(), 16u);  // 4 RECV_F + 4 F + 4 B + 4 SEND_B
  EXPECT_EQ(text[3][0], "3RECV_F0");
  EXPECT_EQ(text[3][2], "3B0");
  EXPECT_EQ(text[3][3], "3SEND_B0");
  EXPECT_EQ(text[0][0], "0F0");
  EXPECT_EQ(text[0][1], "0SEND_F0");
  EXPECT_TRUE(find_plan_issues(lowered).empty());
}

TEST(LowerTest, VPlacementKeepsSameRankNeighboursLocal) {
  const Plan lowered = lower(testing::v_gpipe_plan(2, 1));
  EXPECT_EQ(plan_text(lowered),
            (Rows{{"0F0", "0SEND_F0", "3RECV_F0", "3F0", "3B0", "3SEND_B0", "0RECV_B0", "0B0"},
                  {"1RECV_F0", "1F0", "2F0", "2SEND_F0", "2RECV_B0", "2B0", "1B0", "1SEND_B0"}}));
  EXPECT_EQ(lowered.placement, Placement::kV);
}

TEST(LowerTest, SplitBackwardSendsAfterIAndWNeedsNoComm) {
  const Plan lowered = lower(testing::gpipe_plan(2, 1, /*split_backward=*/true));
  EXPECT_EQ(plan_text(lowered), (Rows{{"0F0", "0SEND_F0", "0RECV_B0", "0I0", "0W0"},
                                      {"1RECV_F0", "1F0", "1I0", "1SEND_B0", "1W0"}}));
}

TEST(LowerTest, OverlapGetsRecvsBeforeAndSendsAfter) {
  const Plan plan =
      plan_from_text(4, 2, Placement::kV,
                     {{"0F0", "0F1", "3F0", "(3F1;3B0)OVERLAP_F_B", "3B1", "0B0", "0B1"},
                      {"1F0", "1F1", "2F0", "2F1", "2B0", "1B0", "2B1", "1B1"}});
  const Rows text = plan_text(lower(plan));
  const std::vector<std::string> expected_rank0 = {
      "0F0",      "0SEND_F0", "0F1",      "0SEND_F1",
      "3RECV_F0", "3F0",      "3RECV_F1", "(3F1;3B0)OVERLAP_F_B",
      "3SEND_B0", "3B1",      "3SEND_B1", "0RECV_B0",
      "0B0",      "0RECV_B1", "0B1"};
  EXPECT_EQ(text[0], expected_rank0);
}

TEST(LowerTest, IdleSlotsAreDroppedAndOutputIsDeterministic) {
  const Plan plan =
      plan_from_text(2, 1, Placement::kLoop, {{"0F0", "", "", "0B0"}, {"", "1F0", "1B0"}});
  const Plan first = lower(plan);
  EXPECT_EQ(plan_text(first),
            (Rows{{"0F0", "0SEND_F0", "0RECV_B0", "0B0"}, {"1RECV_F0", "1F0", "1B0", "1SEND_B0"}}));
  EXPECT_EQ(plan_text(lower(plan)), plan_text(first));
}

TEST(LowerTest, SingleRankNeedsNoComms) {
  const Plan plan =
      plan_from_text(2, 1, Placement::kCustom, {{"0F0", "1F0", "1B0", "0B0"}}, {0, 0});
  EXPECT_EQ(plan_text(lower(plan)), (Rows{{"0F0", "1F0", "1B0", "0B0"}}));
}

TEST(LowerTest, RejectsLoweredAndInvalidPlans) {
  const Plan lowered = lower(testing::one_f_one_b_plan(2, 2));
  EXPECT_NE(lower_error(lowered).find("already holds SEND/RECV actions"), std::string::npos);
  const Plan invalid = plan_from_text(2, 1, Placement::kLoop, {{"0B0", "0F0"}, {"1F0", "1B0"}});
  const std::string message = lower_error(invalid);
  EXPECT_NE(message.find("rank 0, step 0, action 0B0: 0B0 runs before 0F0"), std::string::npos)
      << message;
  EXPECT_NE(message.find("<-- ERROR HERE (rank 0)"), std::string::npos) << message;
}

}  // namespace
}  // namespace baton
