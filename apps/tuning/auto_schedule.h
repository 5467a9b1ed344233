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

// When schedule.name is `auto`, the chosen candidate as JSON text (rank 0 chooses, the others
// read its choice through the store; recorded in the checkpoint manifest); otherwise "".
// Reads `config`, never writes it.
std::string choose_auto_schedule(const baton::Config& config, const AutoScheduleContext& context);

// `config` with schedule.name, stages_per_rank, microbatches, model.cuts (and model.recompute)
// replaced by the choice's (origin "schedule: auto (<origin_text>)"): the configuration the run
// goes on with, resolved again at its front door (training/resolved_config.h). Throws
// ConfigError naming `origin_text` when `text` is not a choice.
baton::Config with_schedule_choice(baton::Config config, const std::string& text,
                                   const std::string& origin_text);

}  // namespace baton_app
