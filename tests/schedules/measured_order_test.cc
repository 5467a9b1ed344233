// `baton bench tune`'s measured order: which candidate pairs the rounds tell apart.
#include "baton-bench/tune/measured_order.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

namespace {

using baton_app::MeasuredOrder;
using baton_app::pairs_predicted_alike;
using baton_app::resolve_measured_order;
using baton_app::rounds_for;
using baton_app::StepsByRound;
using Pairs = std::vector<std::pair<int, int>>;

// `rounds` rounds of 3 steps, every step of round r scaled by the machine's speed that round
// (1 to 2: a drift far larger than the candidates' differences), times each candidate's own
// factor and a small per-step jitter.
StepsByRound drifting_rounds(const std::vector<double>& factors, int rounds) {
  StepsByRound steps(factors.size());
  for (std::size_t c = 0; c < factors.size(); ++c) {
    for (int round = 0; round < rounds; ++round) {
      const double speed = 1.5 + 0.5 * std::sin(round * 1.7);
      std::vector<double> turn;
      for (int step = 0; step < 3; ++step) {
        const double jitter = 0.002 * std::cos(static_cast<double>(round * 3 + step) * 2.3 + c);
        turn.push_back(100 * speed * factors[c] * (1 + jitter));
      }
      steps[c].push_back(turn);
    }
  }
  return steps;
}

TEST(MeasuredOrder, ADifferenceSmallerThanTheDriftIsResolvedBecauseRoundsArePaired) {
  // 3% apart while the rounds swing by a factor of 3: drawing the same rounds for both
  // candidates keeps the difference visible in every resample.
  const MeasuredOrder order = resolve_measured_order(drifting_rounds({1.03, 1.0}, 20));
  EXPECT_EQ(order.pairs, 1);
  EXPECT_EQ(order.resolved, (Pairs{{1, 0}}));
}

TEST(MeasuredOrder, CandidatesThatDifferLessThanTheirJitterAreNotResolved) {
  // Three candidates: 0 and 1 alike (their jitter differs, their level not), 2 10% slower.
  StepsByRound steps = drifting_rounds({1.0, 1.0, 1.1}, 30);
  for (auto& turn : steps[1]) {
    for (double& step : turn) step *= 1.0005;  // well inside the 0.2% jitter
  }
  const MeasuredOrder order = resolve_measured_order(steps);
  EXPECT_EQ(order.pairs, 3);
  EXPECT_EQ(order.resolved, (Pairs{{0, 2}, {1, 2}}));
}

TEST(MeasuredOrder, OneRoundResolvesNothing) {
  EXPECT_TRUE(resolve_measured_order(drifting_rounds({1.0, 2.0}, 1)).resolved.empty());
  EXPECT_EQ(resolve_measured_order({}).pairs, 0);
  // A candidate without steps takes part in no resolved pair.
  StepsByRound steps = drifting_rounds({1.0, 1.2, 1.4}, 10);
  for (auto& turn : steps[1]) turn.clear();
  EXPECT_EQ(resolve_measured_order(steps).resolved, (Pairs{{0, 2}}));
}

TEST(MeasuredOrder, APerfectPredictionScoresOneForCandidatesFarApartAndLessForCandidatesAlike) {
  // 10% apart with 0.2% jitter: every resample orders them as all the rounds do.
  EXPECT_DOUBLE_EQ(resolve_measured_order(drifting_rounds({1.0, 1.1, 1.2, 1.3}, 20))
                       .perfect_prediction_correlation,
                   1.0);
  // Alike but for their jitter: the order is the noise's, and a resample redraws it.
  const double alike = resolve_measured_order(drifting_rounds({1.0, 1.0, 1.0, 1.0, 1.0}, 20))
                           .perfect_prediction_correlation;
  EXPECT_LT(alike, 0.8);
  // Two alike and two apart: the apart pairs hold in every resample, so a resample scores 1
  // or, with the alike pair swapped, 0.8.
  const double mixed = resolve_measured_order(drifting_rounds({1.0, 1.0, 1.2, 1.4}, 20))
                           .perfect_prediction_correlation;
  EXPECT_GE(mixed, 0.8);
  EXPECT_GT(mixed, alike);
  // A candidate without steps is left out: the other three, far apart, still score 1.
  StepsByRound steps = drifting_rounds({1.0, 1.1, 1.2, 1.3}, 20);
  for (auto& turn : steps[2]) turn.clear();
  EXPECT_DOUBLE_EQ(resolve_measured_order(steps).perfect_prediction_correlation, 1.0);
  // Nothing resampled, or one candidate with steps: no figure.
  EXPECT_TRUE(std::isnan(
      resolve_measured_order(drifting_rounds({1.0, 2.0}, 1)).perfect_prediction_correlation));
  StepsByRound lone = drifting_rounds({1.0, 2.0}, 10);
  for (auto& turn : lone[1]) turn.clear();
  EXPECT_TRUE(std::isnan(resolve_measured_order(lone).perfect_prediction_correlation));
}

TEST(MeasuredOrder, TheBenchSharesItsTurnsAmongTheCandidatesButRunsAtLeastFortyRounds) {
  EXPECT_EQ(rounds_for(0, 10), 40);
  EXPECT_EQ(rounds_for(0, 20), 40);
  EXPECT_EQ(rounds_for(0, 5), 80);
  EXPECT_EQ(rounds_for(0, 3), 134);  // rounded up: every candidate gets its share
  EXPECT_EQ(rounds_for(0, 1), 400);
  EXPECT_EQ(rounds_for(0, 0), 400);
  EXPECT_EQ(rounds_for(7, 5), 7);  // asked for: kept
}

TEST(MeasuredOrder, ThePredictionAgreesOnAPairOnlyWhenItOrdersItTheSameWay) {
  MeasuredOrder order;
  order.pairs = 3;
  order.resolved = {{0, 1}, {2, 1}};
  EXPECT_EQ(pairs_predicted_alike(order, {10, 20, 15}), (Pairs{{0, 1}, {2, 1}}));
  EXPECT_EQ(pairs_predicted_alike(order, {10, 20, 25}), (Pairs{{0, 1}}));
  // A tie in the prediction orders neither way.
  EXPECT_EQ(pairs_predicted_alike(order, {20, 20, 20}), Pairs{});
  EXPECT_EQ(pairs_predicted_alike(order, {}), Pairs{});
}

}  // namespace
