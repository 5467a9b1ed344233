// What each unit of a model costs to run, measured on a real microbatch, and the cuts that
// balance those costs across stages (model.cuts: balanced). Parameter counts are a poor
// proxy: a unit's time depends on its activations and on whether its input needs a gradient.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "baton/export.h"
#include "baton/plan/balanced_cuts.h"
#include "baton/unit_chain.h"

namespace baton {

struct UnitCost {
  double forward_seconds = 0.0;
  double backward_seconds = 0.0;  // full backward: input and parameter gradients
  double total() const { return forward_seconds + backward_seconds; }
};

// Runs every unit of `chain` on `inputs` (one microbatch) `repeats` times, forward then
// backward, and returns the median times per unit. Parameter gradients are cleared after.
BATON_API std::vector<UnitCost> measure_unit_costs(UnitChain& chain,
                                                   const std::vector<at::Tensor>& inputs,
                                                   int repeats = 5);

}  // namespace baton
