// One rank of a training run: everything between a checked configuration and the
// optimizer steps — world, rendezvous, transport, plan, stages, executor, data, progress.
#pragma once

#include <string>

#include "baton/config.h"

namespace baton_app {

struct TrainOptions {
  // When set, each rank writes <dump_dir>/rank<r>.pt (a dict readable by torch.load and
  // torch::pickle_load): "loss" (per step, on the last stage's rank), "grad.<name>" after
  // the first step and "param.<name>" at the end, for equivalence tests.
  std::string dump_dir;
  // Folder of the shipped data (the quickstart text).
  std::string data_dir;
  // Continue from the newest complete checkpoint (checkpoint.dir) instead of step 1.
  bool resume = false;
};

// Runs the configured steps on this rank. Throws baton::Error (annotated StepError when a
// step fails); the caller prints it and exits non-zero.
void train(baton::Config& config, const TrainOptions& options);

}  // namespace baton_app
