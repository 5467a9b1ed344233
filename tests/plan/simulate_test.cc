#include "baton/plan/simulate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "baton/error.h"
#include "baton/plan/lower.h"
#include "baton/plan/measured_costs.h"
#include "error_of.h"
#include "plan_builders.h"

namespace baton {
namespace {

using testing::gpipe_plan;
using testing::interleaved_1f1b_plan;
using testing::one_f_one_b_plan;
using testing::plan_from_text;
using testing::v_gpipe_plan;

std::string simulate_error(const Plan& plan) {
  try {
    simulate(plan);
  } catch (const PlanError& error) {
    return error.what();
  }
  ADD_FAILURE() << "simulate did not throw";
  return {};
}

double expected_bubble(int ranks, int microbatches, int stages_per_rank = 1) {
  return static_cast<double>(ranks - 1) / (stages_per_rank * microbatches + ranks - 1);
}

TEST(SimulateTest, GPipeBubbleMatchesFormulaOnEveryRank) {
  for (int ranks : {1, 2, 4, 8}) {
    for (int microbatches : {1, 4, 8, 13}) {
      SCOPED_TRACE("ranks " + std::to_string(ranks) + ", microbatches " +
                   std::to_string(microbatches));
      const SimulationResult result = simulate(gpipe_plan(ranks, microbatches));
      EXPECT_DOUBLE_EQ(result.makespan, 3.0 * (microbatches + ranks - 1));
      EXPECT_DOUBLE_EQ(result.bubble_fraction, expected_bubble(ranks, microbatches));
      ASSERT_EQ(result.ranks.size(), static_cast<size_t>(ranks));
      for (const RankStatistics& stats : result.ranks) {
        EXPECT_DOUBLE_EQ(stats.busy_time, 3.0 * microbatches);
        EXPECT_DOUBLE_EQ(stats.idle_time, 3.0 * (ranks - 1));
        EXPECT_DOUBLE_EQ(stats.bubble_fraction, expected_bubble(ranks, microbatches));
        EXPECT_EQ(stats.peak_activations, microbatches);
      }
    }
  }
}

TEST(SimulateTest, OneFOneBBubbleMatchesFormulaAndBoundsActivations) {
  for (int ranks : {2, 4, 8}) {
    for (int microbatches : {1, 2, 4, 8, 16}) {
      SCOPED_TRACE("ranks " + std::to_string(ranks) + ", microbatches " +
                   std::to_string(microbatches));
      const SimulationResult result = simulate(one_f_one_b_plan(ranks, microbatches));
      EXPECT_DOUBLE_EQ(result.makespan, 3.0 * (microbatches + ranks - 1));
      EXPECT_DOUBLE_EQ(result.bubble_fraction, expected_bubble(ranks, microbatches));
      for (int rank = 0; rank < ranks; ++rank) {
        EXPECT_DOUBLE_EQ(result.ranks[rank].bubble_fraction, expected_bubble(ranks, microbatches))
            << "rank " << rank;
        // 1F1B's point: rank r holds at most ranks - r activations instead of all microbatches.
        EXPECT_EQ(result.ranks[rank].peak_activations, std::min(ranks - rank, microbatches))
            << "rank " << rank;
      }
    }
  }
}

TEST(SimulateTest, InterleavedOneFOneBBubbleWithCostsScaledByStagesPerRank) {
  for (int ranks : {2, 4}) {
    for (int chunks : {2, 4}) {
      for (int microbatches : {ranks, 2 * ranks, 4 * ranks}) {
        SCOPED_TRACE("ranks " + std::to_string(ranks) + ", chunks " + std::to_string(chunks) +
                     ", microbatches " + std::to_string(microbatches));
        SimulationCosts costs;
        costs.forward = 1.0 / chunks;
        costs.backward = 2.0 / chunks;
        const SimulationResult result =
            simulate(interleaved_1f1b_plan(ranks, chunks, microbatches), costs);
        EXPECT_NEAR(result.makespan, 3.0 * microbatches + 3.0 * (ranks - 1) / chunks, 1e-9);
        EXPECT_NEAR(result.bubble_fraction, expected_bubble(ranks, microbatches, chunks), 1e-12);
        for (const RankStatistics& stats : result.ranks) {
          EXPECT_NEAR(stats.busy_time, 3.0 * microbatches, 1e-9);
        }
      }
    }
  }
}

TEST(SimulateTest, SplitBackwardFreesActivationsAfterW) {
  const SimulationResult result = simulate(gpipe_plan(2, 3, /*split_backward=*/true));
  // F=1, I=1, W=1: each rank is busy 3 per microbatch, like F=1, B=2.
  EXPECT_DOUBLE_EQ(result.ranks[0].busy_time, 9.0);
  EXPECT_EQ(result.ranks[0].peak_activations, 3);
  EXPECT_EQ(result.ranks[1].peak_activations, 3);
}

TEST(SimulateTest, TimelineOfTwoRankGPipe) {
  const SimulationResult result = simulate(gpipe_plan(2, 2));
  // Lowered rank 0: 0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1
  // Lowered rank 1: 1RECV_F0 1F0 1RECV_F1 1F1 1B0 1SEND_B0 1B1 1SEND_B1
  std::string timeline;
  for (const TimelineEntry& entry : result.timeline) {
    timeline += std::to_string(entry.rank) + ":" + to_string(entry.action) + "@" +
                std::to_string(static_cast<int>(entry.start)) + "-" +
                std::to_string(static_cast<int>(entry.end)) + " ";
  }
  EXPECT_EQ(timeline,
            "0:0F0@0-1 1:1RECV_F0@0-1 0:0SEND_F0@1-1 0:0F1@1-2 1:1F0@1-2 0:0SEND_F1@2-2 "
            "0:0RECV_B0@2-5 1:1RECV_F1@2-2 1:1F1@2-3 1:1B0@3-5 0:0B0@5-7 1:1SEND_B0@5-5 "
            "1:1B1@5-7 0:0RECV_B1@7-7 0:0B1@7-9 1:1SEND_B1@7-7 ");
  EXPECT_DOUBLE_EQ(result.makespan, 9.0);
  EXPECT_EQ(result.lowered_plan.rank_steps[0].size(), 8u);
}

TEST(SimulateTest, CommCostsDelayTheReceiverAndOccupyTheSender) {
  SimulationCosts costs;
  costs.send_overhead = 0.5;
  costs.transfer_time = 2.0;
  const SimulationResult result = simulate(gpipe_plan(2, 1), costs);
  // 0F0 [0,1], 0SEND_F0 [1,1.5], data at 3.5; 1F0 [3.5,4.5]; 1B0 [4.5,6.5]; 1SEND_B0 [6.5,7];
  // data at 9; 0B0 [9,11].
  EXPECT_DOUBLE_EQ(result.makespan, 11.0);
  EXPECT_DOUBLE_EQ(result.ranks[0].busy_time, 3.0);
  EXPECT_DOUBLE_EQ(result.ranks[0].idle_time, 8.0);
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 16.0 / 22.0);
}

// A rank posts all its receives at its first communication (as the runtime does): a RECV
// posts them before it waits, a SEND right after its data has gone. With 2 RECVs a rank and
// recv_overhead 2: rank 0's 0SEND_F0 at 1 sends, then posts until 5: 0F1 [5,6], 0SEND_F1 at
// 6. Rank 1's 1RECV_F0 posts for 4 (0F0's output was ready at 1): 1F0 [4,5]; 1RECV_F1 waits
// from 5 to 6; 1F1 [6,7], 1B0 [7,9], 1B1 [9,11]. Rank 0's 0RECV_B0, reached at 6, posts
// nothing more and has its data at 9: 0B0 [9,11]; 0B1 [11,13]. Posting each RECV on its own
// would have delayed 0B1 by another 2.
TEST(SimulateTest, TheFirstCommunicationOfARankPostsAllItsReceives) {
  SimulationCosts costs;
  costs.recv_overhead = 2.0;
  const SimulationResult result = simulate(gpipe_plan(2, 2), costs);
  EXPECT_DOUBLE_EQ(result.makespan, 13.0);
  std::string receives;
  for (const TimelineEntry& entry : result.timeline) {
    if (entry.action.type == ActionType::kForward && entry.rank == 0 &&
        entry.action.microbatch == 1) {
      EXPECT_DOUBLE_EQ(entry.start, 5.0) << "0F1 runs after the posting";
    }
    if (entry.action.type != ActionType::kRecvForward &&
        entry.action.type != ActionType::kRecvBackward) {
      continue;
    }
    receives += to_string(entry.action) + "@" + std::to_string(static_cast<int>(entry.start)) +
                "-" + std::to_string(static_cast<int>(entry.end)) + " ";
  }
  EXPECT_EQ(receives, "1RECV_F0@0-4 1RECV_F1@5-6 0RECV_B0@6-9 0RECV_B1@11-11 ");
  // A rank with no receives pays nothing: one rank holding both stages.
  const Plan local =
      plan_from_text(2, 1, Placement::kCustom, {{"0F0", "1F0", "1B0", "0B0"}}, {0, 0});
  EXPECT_DOUBLE_EQ(simulate(local, costs).makespan, 6.0);
  costs.recv_overhead = -1.0;
  EXPECT_THAT(baton_test::error_of<PlanError>([&] { simulate(gpipe_plan(2, 2), costs); }),
              ::testing::HasSubstr(
                  "simulation cost recv_overhead is -1.000000; costs are finite and not negative"));
}

TEST(SimulateTest, SameRankStagesPassTensorsWithoutWaitingOnComms) {
  SimulationCosts costs;
  costs.transfer_time = 100.0;
  // One rank holding both stages: no comm at all, so the transfer time never applies.
  const Plan plan =
      plan_from_text(2, 1, Placement::kCustom, {{"0F0", "1F0", "1B0", "0B0"}}, {0, 0});
  const SimulationResult result = simulate(plan, costs);
  EXPECT_DOUBLE_EQ(result.makespan, 6.0);
  EXPECT_DOUBLE_EQ(result.bubble_fraction, 0.0);
  EXPECT_EQ(result.ranks[0].peak_activations, 2);
}

TEST(SimulateTest, VPlacementSimulatesAndKeepsTurnaroundLocal) {
  const SimulationResult result = simulate(v_gpipe_plan(2, 2));
  EXPECT_GT(result.makespan, 0.0);
  for (const TimelineEntry& entry : result.timeline) {
    // Stages 1 and 2 are both on rank 1 in the V; nothing travels between them.
    if (is_comm(entry.action.type)) {
      const std::string text = to_string(entry.action);
      EXPECT_NE(text, "1SEND_F0");
      EXPECT_NE(text, "2RECV_F0");
      EXPECT_NE(text, "2SEND_B0");
      EXPECT_NE(text, "1RECV_B0");
    }
  }
  EXPECT_EQ(result.ranks[1].peak_activations, 4);
}

TEST(SimulateTest, OverlapTakesTheSumOfItsParts) {
  // Rank 0 holds stage 0 and 3, rank 1 holds 1 and 2 (V on 2 ranks, 1 microbatch each side).
  const Plan plan =
      plan_from_text(4, 2, Placement::kV,
                     {{"0F0", "0F1", "3F0", "(3F1;3B0)OVERLAP_F_B", "3B1", "0B0", "0B1"},
                      {"1F0", "1F1", "2F0", "2F1", "2B0", "1B0", "2B1", "1B1"}});
  const SimulationResult result = simulate(plan);
  bool found_overlap = false;
  for (const TimelineEntry& entry : result.timeline) {
    if (entry.action.type != ActionType::kOverlapForwardBackward) continue;
    found_overlap = true;
    EXPECT_DOUBLE_EQ(entry.end - entry.start, 3.0);
  }
  EXPECT_TRUE(found_overlap);
  EXPECT_DOUBLE_EQ(result.ranks[0].busy_time, 12.0);
}

// Both ranks receive before they send: rank 0 waits for a gradient rank 1 can only produce after
// receiving a forward that rank 0 only sends after that wait.
Plan crossed_receives_plan() {
  return plan_from_text(
      2, 2, Placement::kLoop,
      {{"0F0", "0SEND_F0", "0RECV_B0", "0F1", "0SEND_F1", "0B0", "0RECV_B1", "0B1"},
       {"1RECV_F1", "1F1", "1RECV_F0", "1F0", "1B0", "1SEND_B0", "1B1", "1SEND_B1"}});
}

TEST(SimulateTest, CrossedReceivesDeadlockAndNameEachBlockedRank) {
  const std::string message = simulate_error(crossed_receives_plan());
  EXPECT_NE(message.find("plan \"test\" cannot finish"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0, step 2, action 0RECV_B0: waits for 1SEND_B0 at rank 1, step 5, "
                         "but rank 1 is blocked at step 0\n"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("rank 1, step 0, action 1RECV_F1: waits for 0SEND_F1 at rank 0, step 4, "
                         "but rank 0 is blocked at step 2\n"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Step 0: 0F0      1RECV_F1 <-- ERROR HERE (rank 1)\n"), std::string::npos)
      << message;
  EXPECT_NE(message.find("Step 2: 0RECV_B0 1RECV_F0 <-- ERROR HERE (rank 0)\n"), std::string::npos)
      << message;
}

TEST(SimulateTest, CheckCanCompleteReportsTheSameDeadlock) {
  EXPECT_NO_THROW(check_can_complete(lower(one_f_one_b_plan(4, 8))));
  try {
    check_can_complete(crossed_receives_plan());
    FAIL() << "no deadlock reported";
  } catch (const PlanError& error) {
    EXPECT_NE(std::string(error.what()).find("0RECV_B0: waits for 1SEND_B0"), std::string::npos)
        << error.what();
  }
}

TEST(SimulateTest, ComputeOnlyOrderingCycleIsReportedWhenLowered) {
  // Valid per rank, but rank 1 wants microbatch 1 first while rank 0 sends it only after it got
  // the gradient of microbatch 0 back.
  const Plan plan = plan_from_text(2, 2, Placement::kLoop,
                                   {{"0F0", "0B0", "0F1", "0B1"}, {"1F1", "1F0", "1B0", "1B1"}});
  const std::string message = simulate_error(plan);
  EXPECT_NE(message.find("rank 0, step 2, action 0RECV_B0: waits for 1SEND_B0 at rank 1, step 5"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("rank 1, step 0, action 1RECV_F1: waits for 0SEND_F1 at rank 0, step 5"),
            std::string::npos)
      << message;
  EXPECT_THAT(baton_test::error_of<PlanError>([&] { lower(plan); }),
              ::testing::HasSubstr(
                  "cannot finish: every unfinished rank waits on something that never happens"));
}

TEST(SimulateTest, MissingCounterpartIsReportedBeforeReplaying) {
  // 1RECV_F0 has no 0SEND_F0: validation names it instead of a bare "blocked".
  const Plan plan = plan_from_text(
      2, 1, Placement::kLoop, {{"0F0", "0RECV_B0", "0B0"}, {"1RECV_F0", "1F0", "1B0", "1SEND_B0"}});
  const std::string message = simulate_error(plan);
  EXPECT_NE(message.find("1RECV_F0 has no matching 0SEND_F0 on rank 0"), std::string::npos)
      << message;
}

}  // namespace
TEST(SimulateTest, PerStageCostsFollowTheSlowestStage) {
  // GPipe on 2 ranks, stage 1 twice as slow as stage 0 (F 1 / 2, B 2 / 4): rank 1 runs its
  // forwards back to back from t = 1 (2m), then its backwards (4m); rank 0's last backward
  // follows (2): makespan = 1 + 2m + 4m + 2.
  for (int m : {1, 4, 7}) {
    MeasuredCosts costs;
    costs.stages = {{1, 2, 1, 1}, {2, 4, 2, 2}};
    const SimulationResult result = simulate(gpipe_plan(2, m), costs);
    EXPECT_DOUBLE_EQ(result.makespan, 6.0 * m + 3) << m << " microbatches";
    EXPECT_DOUBLE_EQ(result.ranks[1].busy_time, 6.0 * m);
    EXPECT_DOUBLE_EQ(result.ranks[0].busy_time, 3.0 * m);
  }
  // Stages the list does not cover fall back to the uniform figures.
  MeasuredCosts partial;
  partial.stages = {{1, 2, 1, 1}};
  EXPECT_DOUBLE_EQ(simulate(gpipe_plan(2, 4), partial).makespan,
                   simulate(gpipe_plan(2, 4)).makespan);
}

namespace {

TEST(SimulateTest, PerStageTransfersAddToTheTransferTime) {
  // GPipe, 2 ranks, 1 microbatch, transfer_time 1: stage 0's activations take 2 more, stage
  // 1's gradient 0.5 more. 0F0 [0,1]; data at 1+1+2 = 4; 1F0 [4,5]; 1B0 [5,7]; gradient at
  // 7+1+0.5 = 8.5; 0B0 [8.5,10.5].
  MeasuredCosts costs;
  costs.transfer_time = 1.0;
  costs.stages.resize(2);
  costs.stages[0].forward_transfer = 2.0;
  costs.stages[1].backward_transfer = 0.5;
  EXPECT_DOUBLE_EQ(simulate(gpipe_plan(2, 1), costs).makespan, 10.5);
}

TEST(SimulateTest, PerStageSendOverheadsAddToTheSendOverhead) {
  // GPipe, 2 ranks, 1 microbatch, F 1, B 2, transfer_time 1, send_overhead 0.5: stage 0's
  // SEND_F occupies rank 0 for 0.5 + 1 = 1.5, stage 1's SEND_B rank 1 for 0.5 + 0.25.
  // 0F0 [0,1]; 0SEND_F0 [1,2.5]; data at 3.5; 1F0 [3.5,4.5]; 1B0 [4.5,6.5]; 1SEND_B0
  // [6.5,7.25]; gradient at 8.25; 0B0 [8.25,10.25].
  MeasuredCosts costs;
  costs.transfer_time = 1.0;
  costs.send_overhead = 0.5;
  costs.stages.resize(2);
  costs.stages[0].forward_send_overhead = 1.0;
  costs.stages[0].backward_send_overhead = 100.0;  // stage 0 sends nothing back
  costs.stages[1].forward_send_overhead = 100.0;   // nor stage 1 anything forward
  costs.stages[1].backward_send_overhead = 0.25;
  const SimulationResult result = simulate(gpipe_plan(2, 1), costs);
  EXPECT_DOUBLE_EQ(result.makespan, 10.25);
  int sends = 0;
  for (const TimelineEntry& entry : result.timeline) {
    if (entry.action.type == ActionType::kSendForward) {
      EXPECT_DOUBLE_EQ(entry.end - entry.start, 1.5);
      ++sends;
    }
    if (entry.action.type == ActionType::kSendBackward) {
      EXPECT_DOUBLE_EQ(entry.end - entry.start, 0.75);
      ++sends;
    }
  }
  EXPECT_EQ(sends, 2);
  // Negative: refused, naming the stage and the cost.
  costs.stages[1].backward_send_overhead = -1.0;
  try {
    simulate(gpipe_plan(2, 1), costs);
    ADD_FAILURE() << "a negative send overhead was accepted";
  } catch (const PlanError& error) {
    EXPECT_NE(std::string(error.what()).find("of stage 1: backward_send_overhead"),
              std::string::npos)
        << error.what();
  }
}

TEST(SimulateTest, PeakMemoryInBytesFollowsLiveActivations) {
  // 1F1B on 2 ranks, 4 microbatches: rank 0 holds at most 2 microbatches, rank 1 one;
  // GPipe holds all 4 on both. Stage 0 keeps 100 bytes per microbatch, stage 1 10, and
  // they hold 1000 and 50 bytes of parameters and optimizer state.
  MeasuredCosts costs;
  costs.stages.resize(2);
  costs.stages[0].activation_bytes = 100;
  costs.stages[0].static_bytes = 1000;
  costs.stages[1].activation_bytes = 10;
  costs.stages[1].static_bytes = 50;
  const SimulationResult one_f_one_b = simulate(one_f_one_b_plan(2, 4), costs);
  EXPECT_DOUBLE_EQ(one_f_one_b.ranks[0].peak_activation_bytes, 200);
  EXPECT_DOUBLE_EQ(one_f_one_b.ranks[0].peak_memory_bytes(), 1200);
  EXPECT_DOUBLE_EQ(one_f_one_b.ranks[1].peak_activation_bytes, 10);
  EXPECT_DOUBLE_EQ(one_f_one_b.ranks[1].peak_memory_bytes(), 60);
  const SimulationResult gpipe = simulate(gpipe_plan(2, 4), costs);
  EXPECT_DOUBLE_EQ(gpipe.ranks[0].peak_memory_bytes(), 1400);
  EXPECT_DOUBLE_EQ(gpipe.ranks[1].peak_memory_bytes(), 90);
  // Split backward: released at W, as the count is.
  const SimulationResult split = simulate(gpipe_plan(2, 3, /*split_backward=*/true), costs);
  EXPECT_DOUBLE_EQ(split.ranks[0].peak_activation_bytes, 300);
}

TEST(SimulateTest, RecomputationHoldsOnlyInputsUntilTheBackwardAndRunsTheForwardAgain) {
  // 1F1B on 2 ranks, 4 microbatches, F = 1, B = 2; stage 0 keeps 100 bytes per microbatch of
  // which its input is 4. Without recomputation rank 0 holds 2 microbatches' 200 bytes; with
  // it 2 inputs (8 bytes) until a B rebuilds one microbatch's 100: 4 + 100 at most. Each of
  // stage 0's B costs one more forward: rank 0's work goes from 4 x 3 to 4 x 4.
  MeasuredCosts costs;
  costs.stages.resize(2);
  costs.stages[0].activation_bytes = 100;
  costs.stages[0].input_bytes = 4;
  costs.stages[1].activation_bytes = 10;
  const SimulationResult plain = simulate(one_f_one_b_plan(2, 4), costs);
  ASSERT_DOUBLE_EQ(plain.ranks[0].peak_activation_bytes, 200);
  ASSERT_DOUBLE_EQ(plain.ranks[0].busy_time, 12);
  costs.stages[0].recompute = true;
  const SimulationResult recomputed = simulate(one_f_one_b_plan(2, 4), costs);
  EXPECT_DOUBLE_EQ(recomputed.ranks[0].peak_activation_bytes, 104);
  EXPECT_DOUBLE_EQ(recomputed.ranks[0].busy_time, 16);
  EXPECT_DOUBLE_EQ(recomputed.ranks[1].peak_activation_bytes, 10);  // not recomputed
  EXPECT_GT(recomputed.makespan, plain.makespan);
  // Split backward: I rebuilds the activations, W releases them; GPipe holds 3 inputs, then
  // each I adds a microbatch's activations until its W.
  const SimulationResult split = simulate(gpipe_plan(2, 3, /*split_backward=*/true), costs);
  EXPECT_DOUBLE_EQ(split.ranks[0].peak_activation_bytes, 3 * 4 + 96);
}

TEST(SimulateTest, TotalsOnlyAgreeWithTheFullReplay) {
  SimulationOptions totals_only;
  totals_only.timeline = false;
  totals_only.keep_plan = false;
  SimulationCosts costs;
  costs.transfer_time = 0.25;
  costs.send_overhead = 0.1;
  const Plan plan = interleaved_1f1b_plan(4, 2, 8);
  const SimulationResult full = simulate(plan, costs);
  const SimulationResult totals = simulate(plan, costs, totals_only);
  EXPECT_DOUBLE_EQ(totals.makespan, full.makespan);
  EXPECT_DOUBLE_EQ(totals.bubble_fraction, full.bubble_fraction);
  ASSERT_EQ(totals.ranks.size(), full.ranks.size());
  for (std::size_t rank = 0; rank < full.ranks.size(); ++rank) {
    EXPECT_DOUBLE_EQ(totals.ranks[rank].busy_time, full.ranks[rank].busy_time);
    EXPECT_EQ(totals.ranks[rank].peak_activations, full.ranks[rank].peak_activations);
  }
  EXPECT_TRUE(totals.timeline.empty());
  EXPECT_EQ(totals.lowered_plan.num_ranks, 0);
  EXPECT_FALSE(full.timeline.empty());
}

template <typename Costs>
std::string cost_error(const Costs& costs) {
  try {
    simulate(gpipe_plan(2, 1), costs);
  } catch (const PlanError& error) {
    return error.what();
  }
  ADD_FAILURE() << "the costs were accepted";
  return {};
}

TEST(SimulateTest, NegativeOrNonFiniteCostsAreRefusedByName) {
  SimulationCosts costs;
  costs.transfer_time = -1;
  EXPECT_NE(cost_error(costs).find("simulation cost transfer_time is -1"), std::string::npos);
  MeasuredCosts stage_costs;
  stage_costs.stages.resize(2);
  stage_costs.stages[1].forward = std::nan("");
  EXPECT_NE(cost_error(stage_costs).find("simulation cost of stage 1: forward is nan"),
            std::string::npos);
}

}  // namespace
}  // namespace baton
