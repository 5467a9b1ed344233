// Optional transport capability: summing tensors across a group of ranks (all-reduce), what
// data parallelism needs to combine the gradients of the replicas of a pipeline
// (world.data_parallel, docs/runtime.md). A transport declares it in its descriptor
// (kCapabilityAllReduce, baton/plugin.h) and implements it by also deriving from
// AllReduceTransport, the interface the runtime calls; a transport without it still runs
// every plan with one replica.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/transport.h"

namespace baton {

// One all-reduce, named for errors: "all-reduce #3 in group [1, 3] (2 tensors, 4096 bytes)".
struct BATON_API CollectiveDescription {
  std::vector<int> group;
  std::uint64_t sequence = 0;  // 1 for a group's first all-reduce
  std::size_t tensors = 0;
  std::size_t bytes = 0;

  std::string str() const;
};

// "[1, 3]"
BATON_API std::string format_group(const std::vector<int>& ranks);

class BATON_API AllReduceTransport {
 public:
  virtual ~AllReduceTransport();

  // Collective over `ranks` (ascending, this rank among them): every member calls it with the
  // same list, after connect(), and ranks that share several groups join them in the same
  // order. Returns the handle iallreduce() takes. Throws TransportError naming the group when
  // the list is not ascending or lacks this rank, or a member does not join within the
  // transport's timeout.
  virtual int join_group(const std::vector<int>& ranks) = 0;

  // Starts summing each of `tensors` elementwise across the group, in place. Every member
  // posts the same tensors (count, element counts, dtypes) in the same order, and a group's
  // all-reduces run in the order they were posted. Tensors are contiguous and on a device the
  // transport supports. One Work for all of them, with the rules of Work: wait() throws
  // TransportError naming the group and the all-reduce when it failed or timed out, and a
  // timeout aborts the transport. abort() fails every pending all-reduce too.
  virtual std::unique_ptr<Work> iallreduce(int group, const std::vector<at::Tensor>& tensors) = 0;
};

// The checks every transport makes before queueing an all-reduce: `group` is a joined group,
// each tensor is defined, contiguous and (unless `allow_non_cpu`) on the CPU. Returns the
// description to name it by. Throws TransportError naming the tensor and what is wrong.
BATON_API CollectiveDescription describe_all_reduce(int rank, const std::vector<int>& group,
                                                    std::uint64_t sequence,
                                                    const std::vector<at::Tensor>& tensors,
                                                    bool allow_non_cpu = false);

// The store key under which the members of `ranks` meet to join it (the occurrence-th time
// that list is joined, counting from 0): "group/0,2,#0", the same on every member.
BATON_API std::string group_key(const std::vector<int>& ranks, int occurrence);

// Checks a group list for join_group: not empty, ascending, without repeats, within the
// world, and holding `rank`. Throws TransportError saying which rule it breaks.
BATON_API void check_group(const std::vector<int>& ranks, int rank, int world_size);

}  // namespace baton
