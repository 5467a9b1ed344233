// What each unit of a model costs to run, measured on a real microbatch, for the cuts that
// balance those costs across stages (model.cuts: balanced, baton/plan/balanced_cuts.h).
// Parameter counts are a poor proxy: a unit's time depends on its activations and on whether
// its input needs a gradient. The quick measurement of the profiling room: the schedule
// search's full one (F, B, I, W and memory at every microbatch size) is model_profiler.h.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "baton/unit_chain.h"

namespace baton_app {

struct UnitCost {
  double forward_seconds = 0.0;
  double backward_seconds = 0.0;  // full backward: input and parameter gradients
  double total() const { return forward_seconds + backward_seconds; }
};

// Runs every unit of `chain` on `inputs` (one microbatch) `repeats` times, forward then
// backward, and returns the median times per unit. Parameter gradients are cleared after.
std::vector<UnitCost> measure_unit_costs(baton::UnitChain& chain,
                                         const std::vector<at::Tensor>& inputs, int repeats = 5);

}  // namespace baton_app
