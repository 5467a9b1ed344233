// The depth-first ("interleaved") 1F1B order shared by interleaved_1f1b and zero_bubble, after
// Megatron-LM's interleaved schedule as generalised by PyTorch's ScheduleInterleaved1F1B and
// ScheduleInterleavedZeroBubble. Header-only: each plugin is its own shared library.
//
// With v stages per rank in loop placement (rank k holds stages k, k+r, ..., k+(v-1)r, called
// chunks 0..v-1), microbatches go through in rounds: a rank runs the forwards of one round on
// chunk 0, then the same round on chunk 1, ..., then the next round. Backwards run the same
// rounds with the chunks reversed. Rank k warms up with the forwards of every chunk but the last
// for the first round, plus `warmup_per_hop` more for each rank after it (the time the first
// gradient needs to come back: 2 per hop when F and B alternate, 1 when only I sits on the
// gradient's path); then it alternates one forward and one backward, then drains the backwards.
//
// Megatron uses rounds of exactly r microbatches and so needs m to be a multiple of r; PyTorch
// takes max(1, m / r) rounds of equal size and needs that count to divide m. Here the same
// number of rounds may differ in size by one (the larger ones first), which gives PyTorch's
// order whenever PyTorch accepts the count and a valid, deadlock-free one for every other count:
// the tests check every shape up to 8 ranks x 4 stages per rank x 64 microbatches, and that the
// bubble still equals (r-1)/(v*m+r-1) for every m >= r.
#pragma once

#include <algorithm>
#include <vector>

#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace baton {
namespace depth_first {

// The chunk of each of a rank's forwards (`forward[j]` for the j-th) and backwards, in order.
struct ChunkOrder {
  std::vector<int> forward;
  std::vector<int> backward;
  int first_round_size = 0;
};

inline ChunkOrder chunk_order(const ScheduleShape& shape) {
  const int v = shape.stages_per_rank;
  const int rounds = std::max(1, shape.microbatches / shape.ranks);
  ChunkOrder order;
  for (int round = 0; round < rounds; ++round) {
    const int size = shape.microbatches / rounds + (round < shape.microbatches % rounds ? 1 : 0);
    if (round == 0) order.first_round_size = size;
    for (int chunk = 0; chunk < v; ++chunk) {
      order.forward.insert(order.forward.end(), size, chunk);
      order.backward.insert(order.backward.end(), size, v - 1 - chunk);
    }
  }
  return order;
}

struct Options {
  int warmup_per_hop = 2;
  // Zero bubble: backward as I, with W deferred. Rank k issues the W of its oldest I after each
  // of its I's from the k-th on, and the rest at the end.
  bool split_backward = false;
};

// Appends rank `rank`'s order for `shape` to `program`. Chunk c of rank k is stage c * r + k.
inline void append_rank_order(const ScheduleShape& shape, int rank, const Options& options,
                              RankProgram* program) {
  const int v = shape.stages_per_rank;
  const int r = shape.ranks;
  const ChunkOrder order = chunk_order(shape);
  const int total = v * shape.microbatches;  // forwards (and backwards) on this rank
  const int warmup =
      std::min((v - 1) * order.first_round_size + options.warmup_per_hop * (r - 1 - rank), total);

  auto forward = [&](int j) { program->forward(order.forward[j] * r + rank); };
  auto backward = [&](int j) {
    const int stage = order.backward[j] * r + rank;
    if (!options.split_backward) {
      program->backward(stage);
      return;
    }
    program->backward_input(stage);
    // Later ranks get their first gradient sooner after their last forward and would idle at
    // the end; holding back `rank` Ws fills that time (ZB-H1's rule).
    if (j >= rank) program->weight();
  };

  for (int j = 0; j < warmup; ++j) forward(j);
  for (int j = warmup; j < total; ++j) {
    forward(j);
    backward(j - warmup);
  }
  for (int j = total - warmup; j < total; ++j) backward(j);
  while (program->weight()) {
  }
}

}  // namespace depth_first
}  // namespace baton
