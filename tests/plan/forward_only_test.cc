// The forward-only pass an evaluation runs on a training plan's ranks and stages: every
// (stage, microbatch) forward once, on the stage's rank, with a RECV_F before each forward whose
// input is on another rank and a SEND_F after each whose consumer is; and it finishes whatever
// the placement (replayed here: the simulator wants a training plan's backwards).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "baton/error.h"
#include "baton/plan/forward_only.h"
#include "baton/plan/lower.h"
#include "plan_builders.h"

namespace baton {
namespace {

using ::testing::ElementsAre;

// Runs the ranks' lists in turns: a RECV_F waits for its SEND_F, an F for its input (the
// previous stage's F on this rank, or the RECV_F before it). True when every rank finishes.
bool finishes(const Plan& plan) {
  std::set<std::pair<int, int>> sent, forwarded;  // (stage, microbatch)
  std::vector<std::size_t> next(static_cast<std::size_t>(plan.num_ranks), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (int rank = 0; rank < plan.num_ranks; ++rank) {
      const auto& steps = plan.rank_steps[static_cast<std::size_t>(rank)];
      std::size_t& at = next[static_cast<std::size_t>(rank)];
      while (at < steps.size()) {
        const Action& action = *steps[at];
        const std::pair<int, int> previous{action.stage - 1, action.microbatch};
        if (action.type == ActionType::kRecvForward && !sent.count(previous)) break;
        if (action.type == ActionType::kForward && action.stage > 0 &&
            plan.stage_to_rank[static_cast<std::size_t>(action.stage - 1)] == rank &&
            !forwarded.count(previous)) {
          break;
        }
        if (action.type == ActionType::kForward)
          forwarded.insert({action.stage, action.microbatch});
        if (action.type == ActionType::kSendForward) sent.insert({action.stage, action.microbatch});
        ++at;
        moved = true;
      }
    }
  }
  for (int rank = 0; rank < plan.num_ranks; ++rank) {
    if (next[static_cast<std::size_t>(rank)] !=
        plan.rank_steps[static_cast<std::size_t>(rank)].size())
      return false;
  }
  return true;
}

TEST(ForwardOnlyPlan, TwoRanksReceiveRightBeforeAndSendRightAfter) {
  const Plan plan = forward_only_plan(lower(testing::gpipe_plan(2, 4)), 2);
  EXPECT_EQ(plan.num_microbatches, 2);
  EXPECT_THAT(testing::plan_text(plan),
              ElementsAre(ElementsAre("0F0", "0SEND_F0", "0F1", "0SEND_F1"),
                          ElementsAre("1RECV_F0", "1F0", "1RECV_F1", "1F1")));
}

TEST(ForwardOnlyPlan, EveryPlacementRunsEveryForwardOnceAndFinishes) {
  const std::vector<std::pair<const char*, Plan>> plans = {
      {"loop, 4 ranks", lower(testing::one_f_one_b_plan(4, 8))},
      {"interleaved", lower(testing::interleaved_1f1b_plan(2, 2, 4))},
      {"v", lower(testing::v_gpipe_plan(2, 4))},
  };
  for (const auto& [name, training] : plans) {
    for (const int microbatches : {1, 3, 8}) {
      const Plan plan = forward_only_plan(training, microbatches);
      std::set<std::pair<int, int>> forwards;
      for (int rank = 0; rank < plan.num_ranks; ++rank) {
        for (const PlanSlot& slot : plan.rank_steps[static_cast<std::size_t>(rank)]) {
          ASSERT_TRUE(slot.has_value());
          EXPECT_NE(slot->type, ActionType::kBackward) << name;
          EXPECT_EQ(plan.stage_to_rank[static_cast<std::size_t>(slot->stage)], rank) << name;
          if (slot->type == ActionType::kForward) {
            EXPECT_TRUE(forwards.insert({slot->stage, slot->microbatch}).second) << name;
          }
        }
      }
      EXPECT_EQ(forwards.size(), static_cast<std::size_t>(plan.num_stages * microbatches)) << name;
      EXPECT_TRUE(finishes(plan)) << name << ", " << microbatches << " microbatches";
    }
  }
}

TEST(ForwardOnlyPlan, NoMicrobatchIsRefused) {
  EXPECT_THROW(forward_only_plan(lower(testing::gpipe_plan(2, 4)), 0), PlanError);
}

}  // namespace
}  // namespace baton
