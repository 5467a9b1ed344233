// Which candidates a benchmark's measurement tells apart, for `baton bench tune`: a rank
// correlation over candidates whose measured steps differ by less than the machine's noise
// scores the noise, so the bench also says which pairs the measurement orders with
// confidence and how many of those the prediction orders alike. LibTorch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace baton_app {

// steps_ms[candidate][round]: the candidate's counted steps of that round (milliseconds).
// Every candidate has the same rounds, run close together in time: a round is the unit of
// the machine's drift.
using StepsByRound = std::vector<std::vector<std::vector<double>>>;

struct MeasuredOrder {
  int pairs = 0;  // candidate pairs in all
  // (faster, slower): the pairs whose order holds in at least `confidence` of the resamples.
  std::vector<std::pair<int, int>> resolved;
  // What a prediction that knew every candidate's true step would typically score against a
  // measurement this noisy: the median over the resamples of the rank correlation between the
  // candidates' measured steps (the median of all their steps) and the resample's. Not a
  // bound (a run's noise can favour a prediction), and generous when candidates are alike
  // (the measured medians spread them apart by their noise), and overconfident with a handful
  // of rounds (the resamples reuse them: 4 rounds can say 1 where the two halves disagree); at
  // 40 it matched a simulation of the runs' consensus. Candidates without steps are left out;
  // NaN when nothing was resampled or fewer than two candidates have steps.
  double perfect_prediction_correlation = std::numeric_limits<double>::quiet_NaN();
};

// Bootstrap over rounds: `resamples` times, draws as many rounds as there are with
// replacement (the same rounds for every candidate, keeping each round's pairing) and takes
// each candidate's median step over them, as the bench's measured step is taken; a pair is
// resolved when one candidate is the faster in at least `confidence` of the resamples
// (0.975: a two-sided 95% interval of their difference excludes zero). Deterministic for a
// given `seed`. Candidates without steps take part in no resolved pair, and with fewer than
// two rounds no pair is resolved: one round says nothing of how the machine drifts.
MeasuredOrder resolve_measured_order(const StepsByRound& steps_ms, int resamples = 1000,
                                     double confidence = 0.975, std::uint64_t seed = 1);

// The rounds a bench gives `candidates` when `requested` is 0: kBenchTurns shared among them,
// at least kFewestRounds. At 40 rounds a candidate's measured step scatters by ~1.3% between
// bench runs on a 2-core machine, just what the bootstrap over one run's rounds gives (no
// launch adds noise of its own): more rounds are what narrows it, and fewer candidates get
// them in the same time. A `requested` count above 0 is kept.
constexpr int kBenchTurns = 400;
constexpr int kFewestRounds = 40;
int rounds_for(int requested, std::size_t candidates);

// Of `order.resolved`, the pairs that `predicted` (one value per candidate, lower = faster)
// orders the same way; a tie in the prediction orders neither way.
std::vector<std::pair<int, int>> pairs_predicted_alike(const MeasuredOrder& order,
                                                       const std::vector<double>& predicted);

}  // namespace baton_app
