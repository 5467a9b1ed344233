// Receive buffers, allocated at setup from the exchanged metadata and reused every step: a
// transport receives into them and never allocates per message. Each (stage, direction) this
// rank receives has a pool of buffer sets ("slots"), as many as the plan keeps in use at once
// plus a few posted ahead — not one per microbatch, so memory does not grow with the
// microbatch count on schedules that bound their activations.
//
// A slot is taken when its receive is posted and given back after the last computation that
// reads it. It is handed out again only once nothing else refers to its tensors: a stage that
// passes its input through sends the received tensor itself, an input gradient may be the
// received gradient, and autograd may keep either; those references keep the slot busy (the
// pool grows instead, which allocations() shows) rather than let a receive overwrite them.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "baton/export.h"
#include "baton/tensor_meta.h"

namespace baton {

enum class FlowDirection { kForward, kBackward };

class BATON_API RecvBuffers {
 public:
  // Sets up the pool of (stage, direction) with `slots` buffer sets shaped by `metas`. Adding
  // the same pool twice is a programming error.
  void add_pool(int stage, FlowDirection direction, const std::vector<TensorMeta>& metas,
                int slots);

  // A free slot of the pool that nothing outside it refers to; -1 when there is none.
  int take_free_slot(int stage, FlowDirection direction);
  // A free slot, or a new one when every slot is busy.
  int take_slot(int stage, FlowDirection direction);
  // The slot's receive has been read for the last time.
  void give_back(int stage, FlowDirection direction, int slot);
  const std::vector<at::Tensor>& tensors(int stage, FlowDirection direction, int slot) const;

  // How many tensors were ever allocated: constant after setup unless a pool had to grow.
  std::int64_t allocations() const { return allocations_; }
  std::int64_t bytes() const { return bytes_; }
  // Slots of a pool (0 for a pool that does not exist).
  int slots(int stage, FlowDirection direction) const;

 private:
  struct Pool {
    std::vector<TensorMeta> metas;
    std::deque<std::vector<at::Tensor>> slots;  // a deque: handed-out references stay valid
    std::vector<bool> taken;
  };
  using PoolKey = std::pair<int, int>;  // stage, FlowDirection

  Pool& pool(int stage, FlowDirection direction);
  const Pool& pool(int stage, FlowDirection direction) const;
  void add_slot(Pool& pool);

  std::map<PoolKey, Pool> pools_;
  std::int64_t allocations_ = 0;
  std::int64_t bytes_ = 0;
};

}  // namespace baton
