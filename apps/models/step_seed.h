// The one seed of a training step. Every piece of randomness a step uses — the synthetic
// batch (inputs drawn first, then targets), the text windows' starts, dropout inside the model
// (the global generator, reseeded before each step) — comes from a generator seeded with
// step_seed(run.seed, step), so a step's data and randomness depend on the seed and the step
// alone: a resumed run reproduces an uninterrupted one, and every rank draws the same batch.
// docs/configuration.md (run.seed) states the rule for references outside baton.
#pragma once

#include <cstdint>

namespace baton_models {

inline std::uint64_t step_seed(std::uint64_t run_seed, std::int64_t step) {
  return run_seed * 1000003 + static_cast<std::uint64_t>(step);
}

}  // namespace baton_models
