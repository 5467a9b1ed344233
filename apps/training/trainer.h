// One rank of a training run: train() starts the rank (world, logging, threads; with
// schedule: auto, the choice), builds its pipeline (rank_pipeline.h: plan, model, stages,
// transport, executor, optimizer) and runs the step loop with its checkpoints, progress,
// metrics and trace.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/runtime/executor.h"

namespace baton_app {

struct TrainOptions {
  // When set, each rank writes <dump_dir>/rank<r>.pt (a dict readable by torch.load and
  // torch::pickle_load): "initial.<name>" before the first step, "loss" (per step, on the
  // last stage's rank), "grad.<name>" after the first step and "param.<name>" at the end,
  // for equivalence tests.
  std::string dump_dir;
  // Folder of the shipped data (the quickstart text).
  std::string data_dir;
  // Continue from the newest complete checkpoint (checkpoint.dir) instead of step 1.
  bool resume = false;
  // Start afresh over an earlier run's checkpoints, moving that run aside (run_folder.h).
  bool overwrite = false;

  // For benchmarks (baton bench pipeline): observers of the executor's steps (typed spans),
  // and `on_step`, which sees every step as it ends: when it started (steady clock, seconds),
  // how long it took in all (batch, zeroing, plan, optimizer, progress) and the executor's
  // result.
  std::vector<std::shared_ptr<baton::StepObserver>> step_observers;
  std::function<void(int step, double started_s, double seconds, const baton::StepResult&)> on_step;
  // After the last step, ranks 0 and 1 time a ping-pong of one stage-boundary message over
  // the run's transport and rank 0 reports it (bytes, one-way seconds).
  std::function<void(std::int64_t bytes, double one_way_seconds)> on_transfer_probe;
};

// Runs the configured steps on this rank. Throws baton::Error (annotated StepError when a
// step fails); the caller prints it and exits non-zero.
void train(baton::Config& config, const TrainOptions& options);

}  // namespace baton_app
