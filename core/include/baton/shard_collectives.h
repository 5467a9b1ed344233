// Optional transport capability: the two halves of an all-reduce on their own — reduce-scatter
// (each member ends with the sum of one shard) and all-gather (each member's shard to
// everyone) — what a sharded optimizer needs (optimizer.shard: replicas, ZeRO-1: each replica
// steps one shard of the parameters). A transport declares it in its descriptor
// (kShardCollectivesInterface, baton/plugin.h) and implements it by also deriving from
// ShardCollectiveTransport; one without it still runs, and a run that shards says which
// transports can. Groups are the all-reduce's (AllReduceTransport::join_group); a group's
// collectives, all-reduces included, run in the order they were posted.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/all_reduce.h"
#include "baton/export.h"
#include "baton/transport.h"

namespace baton {

// The elements [begin, end) of a tensor of `numel` that member `index` of `members` holds:
// shards of ceil(numel / members) elements, in member order, the last ones shorter or empty
// (7 elements over 3 members: [0, 3), [3, 6), [6, 7); 1 over 2: [0, 1), [1, 1)). Megatron's
// distributed optimizer pads its buckets the same way; NCCL's equal counts are the padded
// size.
struct ShardRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
};
BATON_API ShardRange shard_of(std::int64_t numel, int members, int index);

class BATON_API ShardCollectiveTransport {
 public:
  virtual ~ShardCollectiveTransport();

  // Starts summing `input` elementwise across the group into this member's shard: `output`
  // gets the sum of every member's input over shard_of(input.numel(), group size, this
  // member's index). Every member posts an input of the same element count and dtype; output
  // has the shard's element count (possibly 0) and the input's dtype. `input` is left as it
  // was. Tensors are contiguous and on a device the transport supports. The Work has the
  // rules of AllReduceTransport's.
  virtual std::unique_ptr<Work> ireduce_scatter(int group, const at::Tensor& input,
                                                const at::Tensor& output) = 0;

  // Starts gathering every member's `input` (its shard: shard_of(output.numel(), group size,
  // its index) elements) into `output`, in member order, on every member.
  virtual std::unique_ptr<Work> iall_gather(int group, const at::Tensor& input,
                                            const at::Tensor& output) = 0;
};

enum class ShardCollective { kReduceScatter, kAllGather };

// The checks every transport makes before queueing a reduce-scatter or all-gather: defined,
// contiguous, (unless `allow_non_cpu`) on the CPU, one dtype, a dtype with a sum (for a
// reduce-scatter), and `whole` / `shard` of the element counts shard_of() gives this member
// (`rank`) of `group`. Returns its name for errors: "reduce-scatter #3 in group [0, 2] (4096
// bytes, this member's shard 2048)". Throws TransportError naming what is wrong.
BATON_API std::string describe_shard_collective(ShardCollective kind, int rank,
                                                const std::vector<int>& group,
                                                std::uint64_t sequence, const at::Tensor& whole,
                                                const at::Tensor& shard,
                                                bool allow_non_cpu = false);

}  // namespace baton
