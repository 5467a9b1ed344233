// schedule.name: auto in a run (docs/auto.md). Rank 0 measures the model (or reuses the
// run folder's profile), searches every schedule plugin, stages per rank and microbatch
// count, prints the best candidates and writes its choice to <run dir>/schedule_choice.json;
// every rank reads the choice through the store and runs it. On --resume the choice in the
// run folder is kept (or, when the folder has none, the one the newest checkpoint's manifest
// records), so a resumed run is the same pipeline.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "baton/config.h"
#include "baton/store.h"

namespace baton_app {

struct AutoScheduleContext {
  int rank = 0;
  int ranks = 1;                        // of the pipeline
  std::shared_ptr<baton::Store> store;  // null: a single process
  std::chrono::milliseconds timeout{120000};
  std::string run_dir;
  // On --resume without a choice in the run folder: the choice the newest checkpoint's
  // manifest records (empty: none), and that manifest's path.
  std::string recorded_choice;
  std::string recorded_choice_in;
  std::string data_dir;
  bool resume = false;
};

// When schedule.name is `auto`, replaces schedule.name, stages_per_rank, microbatches and
// model.cuts in `config` with the chosen candidate's (origin "schedule: auto (...)") and
// returns the choice as JSON text (for the checkpoint manifest); otherwise does nothing and
// returns "".
std::string resolve_auto_schedule(baton::Config& config, const AutoScheduleContext& context);

}  // namespace baton_app
