// Balanced cuts: the min-max partition of measured unit costs, and the measurement itself.
#include "tuning/unit_costs.h"
#include "baton/plan/balanced_cuts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "baton/error.h"
#include "error_of.h"
#include "test_models.h"

namespace {

double largest_stage(const std::vector<double>& costs, const std::vector<int>& bounds) {
  double largest = 0;
  for (std::size_t s = 0; s + 1 < bounds.size(); ++s) {
    double stage = 0;
    for (int u = bounds[s]; u < bounds[s + 1]; ++u) stage += costs[static_cast<std::size_t>(u)];
    largest = std::max(largest, stage);
  }
  return largest;
}

// Every contiguous partition, by brute force: the reference for the dynamic program.
double best_by_enumeration(const std::vector<double>& costs, int stages) {
  const int units = static_cast<int>(costs.size());
  double best = 1e300;
  for (int mask = 0; mask < (1 << (units - 1)); ++mask) {
    if (__builtin_popcount(static_cast<unsigned>(mask)) != stages - 1) continue;
    std::vector<int> bounds{0};
    for (int u = 1; u < units; ++u) {
      if (mask & (1 << (u - 1))) bounds.push_back(u);
    }
    bounds.push_back(units);
    best = std::min(best, largest_stage(costs, bounds));
  }
  return best;
}

TEST(BalancedBoundaries, EqualUnitsSplitEvenly) {
  EXPECT_EQ(baton::balanced_boundaries({1, 1, 1, 1}, 2), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(baton::balanced_boundaries({1, 1, 1, 1, 1, 1, 1, 1}, 4),
            (std::vector<int>{0, 2, 4, 6, 8}));
}

TEST(BalancedBoundaries, AHeavyUnitGetsAStageOfItsOwn) {
  EXPECT_EQ(baton::balanced_boundaries({4, 1, 1, 1, 1}, 2), (std::vector<int>{0, 1, 5}));
  EXPECT_EQ(baton::balanced_boundaries({1, 1, 1, 1, 4}, 2), (std::vector<int>{0, 4, 5}));
}

TEST(BalancedBoundaries, MatchesExhaustiveSearchOnIrregularCosts) {
  const std::vector<std::vector<double>> cases = {
      {3, 1, 1, 1, 1, 1}, {5, 2, 7, 1, 1, 3, 2, 6}, {0.5, 0.5, 9, 0.1, 0.1, 0.1, 4}, {2, 2, 2}};
  for (const auto& costs : cases) {
    for (int stages = 1; stages <= static_cast<int>(costs.size()); ++stages) {
      const std::vector<int> bounds = baton::balanced_boundaries(costs, stages);
      ASSERT_EQ(bounds.size(), static_cast<std::size_t>(stages) + 1);
      EXPECT_EQ(bounds.front(), 0);
      EXPECT_EQ(bounds.back(), static_cast<int>(costs.size()));
      for (std::size_t s = 0; s + 1 < bounds.size(); ++s) EXPECT_LT(bounds[s], bounds[s + 1]);
      EXPECT_DOUBLE_EQ(largest_stage(costs, bounds), best_by_enumeration(costs, stages))
          << stages << " stages";
    }
  }
}

TEST(BalancedBoundaries, MoreStagesThanUnitsIsAConfigError) {
  EXPECT_THAT(baton_test::error_of<baton::ConfigError>([&] {
                baton::balanced_boundaries({1, 1}, 3);
              }),
              ::testing::HasSubstr("cannot cut 2 units into 3 stages"));
}

TEST(MeasureUnitCosts, TimesEveryUnitAndLeavesNoGradients) {
  auto chain = baton_test::make_mlp_chain(3, 32, 4, 1);
  const auto costs = baton_app::measure_unit_costs(*chain, {torch::randn({8, 32})}, 3);
  ASSERT_EQ(costs.size(), 4u);
  for (const auto& cost : costs) {
    EXPECT_GT(cost.forward_seconds, 0.0);
    EXPECT_GT(cost.backward_seconds, 0.0);
  }
  for (int unit = 0; unit < chain->num_units(); ++unit) {
    for (const auto& named : chain->unit_parameters(unit))
      EXPECT_FALSE(named.second.grad().defined()) << named.first;
  }
}

}  // namespace
