// The seed of one stage's forward of one microbatch. Randomness inside a stage (dropout)
// draws from the default CPU generator, which the runtime seeds with
//
//   forward_seed = (step_seed x 1000003 + stage) x 1000003 + microbatch   (mod 2^64)
//
// right before the stage's forward of that microbatch, where `microbatch` counts across the
// replicas (replica x microbatches per replica + the replica's own). A stage's masks then
// depend on the run's seed, the step, the stage and the global microbatch alone: not on the
// schedule's order, the ranks a stage shares, the replicas or what ran before it, so a run
// trains the same on any layout of the same split, and a resume onto another layout
// continues it exactly (activation recomputation replays a forward by seeding it again).
// docs/your-model.md ("Dropout") states the rule for references outside baton.
#pragma once

#include <cstdint>

namespace baton {

inline std::uint64_t forward_seed(std::uint64_t step_seed, int stage, std::int64_t microbatch) {
  return (step_seed * 1000003 + static_cast<std::uint64_t>(stage)) * 1000003 +
         static_cast<std::uint64_t>(microbatch);
}

}  // namespace baton
