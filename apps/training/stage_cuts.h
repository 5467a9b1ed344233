// Where the model is cut into stages (model.cuts): by parameter counts, by explicit unit
// indices, or balanced on measured per-unit forward + backward time. Balanced cuts are
// measured once, on rank 0, and shared through the store so every rank cuts alike; they are
// kept in the run folder so that --resume cuts as the checkpointed run did.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "baton/params.h"
#include "baton/store.h"
#include "baton/unit_chain.h"
#include "stage_settings.h"

namespace baton_app {

struct StageCutContext {
  int rank = 0;
  std::shared_ptr<baton::Store> store;  // null for a single rank
  std::chrono::milliseconds timeout{60000};
  std::string run_dir;  // balanced cuts are remembered here
  bool resume = false;
};

// Stage boundaries (0, …, units) as `setting` (model.cuts) says. `sample`: one microbatch of
// inputs (balanced only).
std::vector<int> resolve_stage_boundaries(const baton::Setting<StageCuts>& setting,
                                          baton::UnitChain& chain, int num_stages,
                                          const std::vector<at::Tensor>& sample,
                                          const StageCutContext& context);

// "[0, 2, 4]" -> "2, 4" style text of the cuts (the boundaries between stages).
std::string format_cuts(const std::vector<int>& bounds);

}  // namespace baton_app
