// An all-reduce built from point-to-point messages, for transports whose library has none of
// its own (UCX): the ring of Patarasuk and Yuan, as NCCL and Horovod use it. The tensor is cut
// into one chunk per member; G-1 steps of reduce-scatter (each member sends a chunk to the next
// and adds the one it receives from the previous) leave each member one fully summed chunk, and
// G-1 steps of all-gather pass those around. Each member sends and receives 2(G-1)/G of the
// tensor, whatever the group's size.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "baton/export.h"
#include "baton/transport.h"

namespace baton {

// How the ring reaches its neighbours: post one message to or from `peer` (a rank of the
// world) and return its Work. Messages between two members arrive in the order they were
// sent; the ring relies on that and on nothing else (no tags of its own).
struct RingLinks {
  std::function<std::unique_ptr<Work>(const at::Tensor& tensor, int peer)> send;
  std::function<std::unique_ptr<Work>(const at::Tensor& tensor, int peer)> recv;
};

// Sums `tensor` (contiguous) in place across `group` (ascending world ranks, `rank` among
// them). Every member calls it with a tensor of the same element count and dtype. Blocks; each
// wait is bounded by `timeout`. Throws what the links' Works throw.
BATON_API void ring_all_reduce(const at::Tensor& tensor, const std::vector<int>& group, int rank,
                               const RingLinks& links, std::chrono::milliseconds timeout);

// The ring's two halves on their own, with the shards of baton::shard_of
// (baton/shard_collectives.h) for chunks: G-1 steps each, every member sending and receiving
// (G-1)/G of the whole. ring_reduce_scatter sums `input` (left as it was) into this member's
// shard, `output`; ring_all_gather puts every member's `input` shard in place in `output`.
// Blocks; each wait is bounded by `timeout`.
BATON_API void ring_reduce_scatter(const at::Tensor& input, const at::Tensor& output,
                                   const std::vector<int>& group, int rank, const RingLinks& links,
                                   std::chrono::milliseconds timeout);
BATON_API void ring_all_gather(const at::Tensor& input, const at::Tensor& output,
                               const std::vector<int>& group, int rank, const RingLinks& links,
                               std::chrono::milliseconds timeout);

}  // namespace baton
