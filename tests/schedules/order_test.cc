// The classic schedules against the textbook builders the plan tests use (tests/plan): the
// plugins must produce the same per-rank order, so the bubble formulas proven there hold here.
// The newer schedules are checked on their defining features instead.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../plan/plan_builders.h"
#include "schedule_fixture.h"

namespace baton {
namespace testing {
namespace {

Plan build(const std::string& schedule, const ScheduleShape& shape) {
  const LoadedSchedule loaded = load_schedule(schedule);
  loaded->check(shape);
  return loaded->build(shape);
}

TEST(ScheduleOrder, GPipeIsAllForwardsThenAllBackwards) {
  for (int ranks = 1; ranks <= 8; ++ranks) {
    for (int microbatches : {1, 3, 8, 17}) {
      EXPECT_EQ(plan_text(build("gpipe", {ranks, 1, microbatches})),
                plan_text(gpipe_plan(ranks, microbatches)))
          << ranks << " ranks, " << microbatches << " microbatches";
    }
  }
}

TEST(ScheduleOrder, OneFOneBMatchesPipeDreamFlush) {
  for (int ranks = 1; ranks <= 8; ++ranks) {
    for (int microbatches : {ranks, ranks + 1, 2 * ranks, 33}) {
      EXPECT_EQ(plan_text(build("1f1b", {ranks, 1, microbatches})),
                plan_text(one_f_one_b_plan(ranks, microbatches)))
          << ranks << " ranks, " << microbatches << " microbatches";
    }
  }
}

TEST(ScheduleOrder, InterleavedMatchesMegatronWhenMicrobatchesAreAMultipleOfRanks) {
  for (int ranks = 1; ranks <= 8; ++ranks) {
    for (int chunks = 1; chunks <= 4; ++chunks) {
      for (int rounds : {1, 2, 5}) {
        EXPECT_EQ(plan_text(build("interleaved_1f1b", {ranks, chunks, rounds * ranks})),
                  plan_text(interleaved_1f1b_plan(ranks, chunks, rounds * ranks)))
            << ranks << " ranks, " << chunks << " chunks, " << rounds * ranks << " microbatches";
      }
    }
  }
}

// ZB-H1 with its Ws where the textbook puts them, not only its F/I skeleton.
TEST(ScheduleOrder, ZeroBubbleH1MatchesTheTextbookIncludingWeightGradients) {
  for (int ranks = 1; ranks <= 8; ++ranks) {
    for (int microbatches : {1, ranks, 2 * ranks + 1}) {
      EXPECT_EQ(plan_text(build("zero_bubble", {ranks, 1, microbatches})),
                plan_text(zero_bubble_h1_plan(ranks, microbatches)))
          << ranks << " ranks, " << microbatches << " microbatches";
    }
  }
}

// The pairs DualPipeV overlaps run a forward and a backward of the rank's two different stages.
TEST(ScheduleOrder, DualPipeVOverlapsForwardAndBackwardOfItsTwoStages) {
  const int ranks = 4;
  const Plan plan = build("dualpipev", {ranks, 2, 16});
  for (int rank = 0; rank < ranks; ++rank) {
    int pairs = 0;
    for (const PlanSlot& slot : plan.rank_steps[rank]) {
      if (slot->type != ActionType::kOverlapForwardBackward) continue;
      ++pairs;
      ASSERT_EQ(slot->sub_actions.size(), 2u);
      const Action& forward = slot->sub_actions[0];
      const Action& backward = slot->sub_actions[1];
      EXPECT_EQ(forward.type, ActionType::kForward);
      EXPECT_EQ(backward.type, ActionType::kBackward);
      EXPECT_NE(forward.stage, backward.stage);
      EXPECT_EQ(plan.stage_to_rank[forward.stage], rank);
      EXPECT_EQ(plan.stage_to_rank[backward.stage], rank);
    }
    // Main phase: 2 pairs per microbatch beyond 2r - k - 1 (one fewer on the last rank), plus
    // r - k - 1 in the drain.
    const int main_phase = 16 - 2 * ranks + rank + 1;
    const int expected = 2 * main_phase - (rank == ranks - 1 ? 1 : 0) + (ranks - rank - 1);
    EXPECT_EQ(pairs, expected) << "rank " << rank;
  }
}

}  // namespace
}  // namespace testing
}  // namespace baton
