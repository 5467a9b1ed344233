// model.recompute: which stages run their forward again before their backward instead of
// keeping its autograd graph (ExecutorOptions::recompute_stages): `off` (none, the default),
// `on` (every stage), or a list of stage indices, [0, 2]. No LibTorch.
#pragma once

#include <cstdint>
#include <set>

#include "baton/params.h"

namespace baton_app {

// The stages `setting` names, for a pipeline of `num_stages`. Throws ConfigError naming the
// setting's origin for a word other than off/on, an index that is not a whole number, or a
// stage the pipeline does not have.
std::set<int> recomputed_stages(const baton::ParamValue& setting, std::int64_t num_stages);

}  // namespace baton_app
