// The one seed of a training step, and of each row of its batch. Dropout inside the model draws
// from the default generator, seeded before each stage's forward of each microbatch from
// step_seed(run.seed, step) (baton/runtime/forward_seed.h); each row
// of a step's global batch — a synthetic row (its inputs drawn first, then its target), a text
// window's start — from a generator seeded with row_seed(run.seed, step, row). A step's data and
// randomness depend on the seed, the step and the row alone: a resumed run reproduces an
// uninterrupted one, every rank draws the same rows, and a rank draws only the rows it uses, a
// microbatch at a time, whatever the microbatch count. docs/configuration.md ("data") states
// the rule for references outside baton.
#pragma once

#include <cstdint>

namespace baton_models {

inline std::uint64_t step_seed(std::uint64_t run_seed, std::int64_t step) {
  return run_seed * 1000003 + static_cast<std::uint64_t>(step);
}

// Row `row` (0-based, in the global batch) of step `step`; arithmetic modulo 2^64.
inline std::uint64_t row_seed(std::uint64_t run_seed, std::int64_t step, std::int64_t row) {
  return step_seed(run_seed, step) * 1000003 + static_cast<std::uint64_t>(row);
}

}  // namespace baton_models
