// One rank of a training run: train() starts the rank (world, logging, threads; with
// schedule: auto, the choice), builds its pipeline (rank_pipeline.h: plan, model, stages,
// transport, executor, optimizer) and runs the step loop with its checkpoints, progress,
// metrics and trace.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/runtime/executor.h"
#include "training_observer.h"

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

  // For a program that measures the run (a bench): observers of the executor's steps (typed
  // spans), and of the training loop (training_observer.h).
  std::vector<std::shared_ptr<baton::StepObserver>> step_observers;
  std::vector<std::shared_ptr<TrainingObserver>> training_observers;
};

// Runs the configured steps on this rank: `config` as loaded, resolved at the run's front door
// (resolved_config.h) into the rank's own copy. Throws baton::Error (annotated StepError when
// a step fails); the caller prints it and exits non-zero.
void train(const baton::Config& config, const TrainOptions& options);

}  // namespace baton_app
