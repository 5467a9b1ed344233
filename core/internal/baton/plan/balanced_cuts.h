// Stage boundaries that balance measured unit costs: what `model.cuts: balanced` and the
// schedule search (`schedule: auto`) cut a model with. Pure arithmetic, no LibTorch.
#pragma once

#include <vector>

#include "baton/export.h"

namespace baton {

// Stage boundaries (0, …, units) that minimise the most expensive stage: contiguous
// ranges of units, each stage at least one unit. Throws ConfigError when there are fewer
// units than stages.
BATON_API std::vector<int> balanced_boundaries(const std::vector<double>& unit_costs,
                                               int num_stages);

}  // namespace baton
