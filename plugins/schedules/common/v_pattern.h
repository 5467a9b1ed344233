// The controllable-memory V schedules (Qi et al., "Pipeline Parallelism with Controllable
// Memory", NeurIPS 2024; V-Half and V-Min in the sail-sg zero-bubble repository), shared by the
// v_half and v_min plugins. Header-only: each plugin is its own shared library.
//
// Placement is ZB-V's "v": rank k holds stage k on the way down and stage 2r-1-k on the way
// back, and the backward is split into I and W. A microbatch's activations on a rank live from
// its F to its W; how long that is — and so how many microbatches a rank holds — is set by
// a *stable pattern*: on a grid of time slots, rank k starts its four computations of
// microbatch 0 (F down, F up, I up, I down) at four offsets, and microbatch n's six slots
// later. The six slots per microbatch hold those four and the two Ws, so the steady state has
// no bubble; the offsets are chosen so a microbatch's F and its I are as close as the data's
// path allows, which bounds the microbatches in flight (V-Half: about r, half of 1F1B's 2r
// half-stages; V-Min: about 2r/3, a third). Every dependency of the pattern points to an
// earlier slot, so a rank that runs its slots in time order can never deadlock, for any
// microbatch count. Ws go into the free slots, oldest first, the up stage's before the down
// stage's (its gradient is the one the rank just made), the rest at the end.
//
// The repository then greedily moves actions into earlier idle slots where memory allows; here
// the order is the pattern's, and the warm-up's idle slots are squeezed by running each action
// as soon as it can (what the simulator and the runtime do), which leaves a slightly larger
// warm-up and drain bubble than the repository's and the same memory.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace baton_v_pattern {

// Slots of microbatch 0's computations on one rank; microbatch n's are kPeriod * n later.
struct Offsets {
  int down_forward;
  int up_forward;
  int up_input;
  int down_input;
};

constexpr int kPeriod = 6;  // F, F, I, I, W, W of one microbatch on one rank

inline void check_shape(const char* name, const baton::ScheduleShape& shape) {
  baton::check_schedule_shape_positive(name, shape);
  baton::require_stages_per_rank(name, shape, 2,
                                 "exactly 2: one on the way down and one back up the \"v\"");
}

// The plan of `shape` from each rank's offsets.
template <typename OffsetsOf>
baton::Plan build(const char* name, const baton::ScheduleShape& shape,
                  const OffsetsOf& offsets_of) {
  baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kV, name);
  const int ranks = shape.ranks;
  const int microbatches = shape.microbatches;
  enum Kind { kNone = -1, kDownForward, kUpForward, kUpInput, kDownInput };
  for (int rank = 0; rank < ranks; ++rank) {
    const int down = rank;
    const int up = 2 * ranks - 1 - rank;
    const Offsets at = offsets_of(rank, ranks);
    const int starts[] = {at.down_forward, at.up_forward, at.up_input, at.down_input};
    const int last =
        *std::max_element(std::begin(starts), std::end(starts)) + kPeriod * (microbatches - 1);
    std::vector<int> slots(static_cast<std::size_t>(last) + 1, kNone);
    for (int kind = kDownForward; kind <= kDownInput; ++kind) {
      for (int mb = 0; mb < microbatches; ++mb) {
        int& slot = slots[static_cast<std::size_t>(starts[kind] + kPeriod * mb)];
        if (slot != kNone) {
          throw baton::PlanError(std::string(name) +
                                 ": the pattern puts two computations in one "
                                 "slot on rank " +
                                 std::to_string(rank) +
                                 " (a bug in the "
                                 "schedule; please report it with the shape)");
        }
        slot = kind;
      }
    }
    baton::RankProgram program(&plan.rank_steps[static_cast<std::size_t>(rank)], plan.num_stages);
    for (const int kind : slots) {
      switch (kind) {
        case kDownForward:
          program.forward(down);
          break;
        case kUpForward:
          program.forward(up);
          break;
        case kUpInput:
          program.backward_input(up);
          break;
        case kDownInput:
          program.backward_input(down);
          break;
        default:
          if (!program.weight_of(up)) program.weight_of(down);
          break;
      }
    }
    while (program.weight()) {
    }
  }
  return plan;
}

}  // namespace baton_v_pattern
