// `baton bench tune`'s measurement: several candidate pipelines (schedule, stages per rank,
// microbatches, cuts) set up side by side in one set of ranks over one transport, then
// trained in turns — a few steps of each, round after round — so that every candidate meets
// the same spells of a noisy machine. Runs launched one after another each met their own:
// on a shared 2-core machine the speed swings by a fifth within seconds, more than the
// candidates differ (docs/auto.md).
#pragma once

#include <string>
#include <vector>

#include "run_options.h"

namespace baton_app {

struct RotationPlan {
  // Each candidate's --set lines, applied after the run's own.
  std::vector<std::vector<std::string>> candidates;
  int warmup_steps = 3;  // per candidate, once, before the first round; not timed
  int rounds = 20;
  // Steps of one candidate per turn; rank 0 times each of them, and the first step of a turn
  // does not count (it carries the previous candidate's tail): at least 3.
  int steps_per_turn = 5;
};

// What rank 0 measured: intervals_s[candidate][round] holds the counted step intervals of
// that candidate's turn in that round, in seconds; compute_ms[candidate][rank] and
// comm_ms[candidate][rank] what each rank's executor spent a counted step computing, and
// posting and waiting for transfers (baton::StepResult), the mean over its counted steps.
struct RotationResult {
  std::vector<std::vector<std::vector<double>>> intervals_s;
  std::vector<std::vector<double>> compute_ms;
  std::vector<std::vector<double>> comm_ms;
};

// The plan as a file (JSON) for the ranks, and back; read_rotation_plan throws baton::Error
// naming the file when it is missing or malformed.
void write_rotation_plan(const RotationPlan& plan, const std::string& path);
RotationPlan read_rotation_plan(const std::string& path);
void write_rotation_result(const RotationResult& result, const std::string& path);
RotationResult read_rotation_result(const std::string& path);

// One rank's part: sets every candidate up (in order: every rank must), warms each up, then
// trains them in turns, every other round in reverse order. A failure names the candidate.
// Rank 0 returns the timings; the other ranks an empty result.
RotationResult rotate_candidates(const RunOptions& run, const RotationPlan& plan,
                                 const std::string& data_dir);

}  // namespace baton_app
