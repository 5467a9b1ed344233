// Receive buffers, allocated once at setup from the exchanged metadata for every
// (stage, microbatch, direction) the plan receives, and reused every step: a transport
// receives into them and never allocates per message.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "baton/export.h"
#include "baton/tensor_meta.h"

namespace baton {

enum class FlowDirection { kForward, kBackward };

class BATON_API RecvBuffers {
 public:
  // Allocates the buffers for one (stage, microbatch, direction) from `metas`. Allocating
  // the same key twice is a programming error.
  void allocate(int stage, int microbatch, FlowDirection direction,
                const std::vector<TensorMeta>& metas);
  // The buffers of a key; throws baton::Error naming the key when it was never allocated
  // (the plan receives something setup did not foresee).
  const std::vector<at::Tensor>& get(int stage, int microbatch, FlowDirection direction) const;

  // How many tensors were ever allocated: stays constant after setup.
  std::int64_t allocations() const { return allocations_; }
  std::int64_t bytes() const { return bytes_; }

 private:
  std::map<std::tuple<int, int, int>, std::vector<at::Tensor>> buffers_;
  std::int64_t allocations_ = 0;
  std::int64_t bytes_ = 0;
};

}  // namespace baton
