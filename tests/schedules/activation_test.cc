// Peak in-flight activations (stage-microbatch activations alive on a rank, freed by B or W), the
// memory side of each schedule's trade-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "baton/plan/simulate.h"
#include "schedule_fixture.h"

namespace baton {
namespace testing {
namespace {

SimulationResult simulate_schedule(const std::string& name, const ScheduleShape& shape) {
  const LoadedSchedule schedule = load_schedule(name);
  schedule->check(shape);
  return simulate(schedule->build(shape));
}

// The memory advantage of 1F1B: rank k holds at most min(r-k, m) microbatches (min(r, m) on rank
// 0), while GPipe holds all m on every rank.
TEST(ScheduleActivations, OneFOneBHoldsAtMostRanksWhereGPipeHoldsAllMicrobatches) {
  for (int r = 1; r <= 8; ++r) {
    for (int m = r; m <= 64; m += 3) {
      const SimulationResult one_f_one_b = simulate_schedule("1f1b", {r, 1, m});
      const SimulationResult gpipe = simulate_schedule("gpipe", {r, 1, m});
      EXPECT_EQ(one_f_one_b.ranks[0].peak_activations, std::min(r, m)) << "r=" << r << " m=" << m;
      for (int rank = 0; rank < r; ++rank) {
        EXPECT_EQ(one_f_one_b.ranks[rank].peak_activations, std::min(r - rank, m))
            << "1f1b r=" << r << " m=" << m << " rank " << rank;
        EXPECT_EQ(gpipe.ranks[rank].peak_activations, m)
            << "gpipe r=" << r << " m=" << m << " rank " << rank;
      }
    }
  }
}

// Megatron's interleaved warm-up (m a multiple of r): rank 0 holds (v-1)r + 2(r-1) + 1
// activations of its stages, capped by the v*m it has in total.
TEST(ScheduleActivations, InterleavedHoldsItsWarmUpPlusOne) {
  for (int v = 1; v <= 4; ++v) {
    for (int r = 1; r <= 8; ++r) {
      for (int m : {r, 2 * r, 4 * r}) {
        const SimulationResult result = simulate_schedule("interleaved_1f1b", {r, v, m});
        EXPECT_EQ(result.ranks[0].peak_activations, std::min((v - 1) * r + 2 * (r - 1) + 1, v * m))
            << "r=" << r << " v=" << v << " m=" << m;
      }
    }
  }
}

// Breadth first runs every forward of a rank before any backward: all v*m activations at once.
TEST(ScheduleActivations, LoopedBfsHoldsEveryMicrobatchOfEveryStage) {
  for (int v = 1; v <= 4; ++v) {
    for (int r = 1; r <= 8; ++r) {
      for (int m : {1, r, 2 * r + 1}) {
        const SimulationResult result = simulate_schedule("looped_bfs", {r, v, m});
        for (const RankStatistics& rank : result.ranks) {
          EXPECT_EQ(rank.peak_activations, v * m) << "r=" << r << " v=" << v << " m=" << m;
        }
      }
    }
  }
}

// ZB-H1 trades no memory for its smaller bubble: its deferred Ws keep activations alive longer on
// the later ranks, but no rank exceeds 1F1B's peak of r.
TEST(ScheduleActivations, ZeroBubbleH1StaysWithin1F1BsPeak) {
  for (int r = 1; r <= 8; ++r) {
    for (int m : {r, 2 * r, 64}) {
      const SimulationResult result = simulate_schedule("zero_bubble", {r, 1, m});
      for (const RankStatistics& rank : result.ranks) {
        EXPECT_EQ(rank.peak_activations, r) << "r=" << r << " m=" << m;
      }
    }
  }
}

// ZB-V and DualPipeV hold half-size stages. ZB-V peaks at 2r of them on every rank — r full
// stages, the same as 1F1B's rank 0 but balanced across ranks. DualPipeV holds 2r after its
// warm-up (2(r-k-1) + 2(k+1) forwards) and one more while the first overlapped pair's forward
// runs ahead of its backward.
TEST(ScheduleActivations, VSchedulesAreBalancedAcrossRanks) {
  for (int r = 1; r <= 8; ++r) {
    for (int m : {2 * r, 2 * r + 3, 64}) {
      const SimulationResult zbv = simulate_schedule("zbv", {r, 2, m});
      const SimulationResult dual = simulate_schedule("dualpipev", {r, 2, m});
      for (int rank = 0; rank < r; ++rank) {
        EXPECT_EQ(zbv.ranks[rank].peak_activations, 2 * r) << "zbv r=" << r << " m=" << m;
        EXPECT_EQ(dual.ranks[rank].peak_activations, 2 * r + 1)
            << "dualpipev r=" << r << " m=" << m;
      }
    }
  }
}

// The controllable-memory V schedules (Qi et al. 2024) hold half-size stages too, fewer of them:
// V-Half at most r + 2 (r/2 + 1 whole stages' worth: about half of 1F1B's r), V-Min at most
// 2(ceil(r/3) + 1) (about a third) — the pattern's bounds, the same for every microbatch count
// once the steady state is reached, and tending to 1/2 and 1/3 of 1F1B as r grows.
TEST(ScheduleActivations, VHalfAndVMinHoldHalfAndAThirdOfOneFOneB) {
  for (int r = 2; r <= 16; ++r) {
    for (int m : {2 * r, 3 * r + 1, 64}) {
      const int one_f_one_b = simulate_schedule("1f1b", {r, 1, m}).ranks[0].peak_activations;
      const SimulationResult half = simulate_schedule("v_half", {r, 2, m});
      const SimulationResult min = simulate_schedule("v_min", {r, 2, m});
      int half_peak = 0, min_peak = 0;
      for (int rank = 0; rank < r; ++rank) {
        half_peak = std::max(half_peak, half.ranks[rank].peak_activations);
        min_peak = std::max(min_peak, min.ranks[rank].peak_activations);
      }
      EXPECT_LE(half_peak, r + 2) << "v_half r=" << r << " m=" << m;
      EXPECT_LE(min_peak, 2 * ((r + 2) / 3 + 1)) << "v_min r=" << r << " m=" << m;
      EXPECT_LE(min_peak, half_peak) << "r=" << r << " m=" << m;
      EXPECT_EQ(one_f_one_b, r);
      if (r == 16) {  // in whole stages, against 1F1B's r: 0.56 and 0.38 here
        EXPECT_LT(half_peak / 2.0 / one_f_one_b, 0.6) << "m=" << m;
        EXPECT_LT(min_peak / 2.0 / one_f_one_b, 0.4) << "m=" << m;
      }
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace baton
