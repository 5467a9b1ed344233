#include "measured_order.h"

#include <algorithm>
#include <cstddef>
#include <random>

#include "median.h"
#include "rank_correlation.h"

namespace baton_app {

MeasuredOrder resolve_measured_order(const StepsByRound& steps_ms, int resamples, double confidence,
                                     std::uint64_t seed) {
  MeasuredOrder order;
  const std::size_t count = steps_ms.size();
  order.pairs = static_cast<int>(count * (count > 0 ? count - 1 : 0) / 2);
  std::size_t rounds = count > 0 ? steps_ms.front().size() : 0;
  for (const auto& candidate : steps_ms) rounds = std::min(rounds, candidate.size());
  if (count < 2 || rounds < 2 || resamples < 1) return order;

  // Every candidate's median over all its rounds: what the resamples' medians scatter about.
  std::vector<double> all_rounds_median(count, 0.0), pooled;
  std::vector<bool> has_steps(count);
  for (std::size_t c = 0; c < count; ++c) {
    pooled.clear();
    for (std::size_t round = 0; round < rounds; ++round) {
      pooled.insert(pooled.end(), steps_ms[c][round].begin(), steps_ms[c][round].end());
    }
    has_steps[c] = !pooled.empty();
    if (has_steps[c]) all_rounds_median[c] = median_of(pooled);
  }

  // faster_in[i][j]: resamples in which candidate i's median was below candidate j's.
  std::vector<std::vector<int>> faster_in(count, std::vector<int>(count, 0));
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::size_t> pick(0, rounds - 1);
  std::vector<std::size_t> drawn(rounds);
  std::vector<double> medians(count), correlations;
  std::vector<bool> drawn_steps(count);
  for (int resample = 0; resample < resamples; ++resample) {
    for (std::size_t& round : drawn) round = pick(random);
    std::vector<double> reference, resampled;  // of the candidates with steps drawn
    for (std::size_t c = 0; c < count; ++c) {
      pooled.clear();
      for (const std::size_t round : drawn) {
        const std::vector<double>& steps = steps_ms[c][round];
        pooled.insert(pooled.end(), steps.begin(), steps.end());
      }
      drawn_steps[c] = !pooled.empty();
      medians[c] = drawn_steps[c] ? median_of(pooled) : 0.0;
      if (drawn_steps[c]) {  // then it has steps in all its rounds too
        reference.push_back(all_rounds_median[c]);
        resampled.push_back(medians[c]);
      }
    }
    if (reference.size() >= 2) correlations.push_back(rank_correlation(reference, resampled));
    for (std::size_t i = 0; i < count; ++i) {
      for (std::size_t j = 0; j < count; ++j) {
        if (i != j && drawn_steps[i] && drawn_steps[j] && medians[i] < medians[j]) {
          ++faster_in[i][j];
        }
      }
    }
  }
  if (!correlations.empty()) order.perfect_prediction_correlation = median_of(correlations);
  const double needed = confidence * resamples;
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t j = i + 1; j < count; ++j) {
      if (faster_in[i][j] >= needed)
        order.resolved.emplace_back(static_cast<int>(i), static_cast<int>(j));
      if (faster_in[j][i] >= needed)
        order.resolved.emplace_back(static_cast<int>(j), static_cast<int>(i));
    }
  }
  return order;
}

int rounds_for(int requested, std::size_t candidates) {
  if (requested > 0) return requested;
  const int count = static_cast<int>(std::max<std::size_t>(candidates, 1));
  return std::max(kFewestRounds, (kBenchTurns + count - 1) / count);
}

std::vector<std::pair<int, int>> pairs_predicted_alike(const MeasuredOrder& order,
                                                       const std::vector<double>& predicted) {
  std::vector<std::pair<int, int>> alike;
  for (const auto& [faster, slower] : order.resolved) {
    const auto f = static_cast<std::size_t>(faster), s = static_cast<std::size_t>(slower);
    if (f < predicted.size() && s < predicted.size() && predicted[f] < predicted[s]) {
      alike.emplace_back(faster, slower);
    }
  }
  return alike;
}

}  // namespace baton_app
