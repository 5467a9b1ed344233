#include "baton/runtime/recv_buffers.h"

#include <string>

#include "baton/error.h"

namespace baton {
namespace {

std::string describe_pool(int stage, FlowDirection direction) {
  return std::string(direction == FlowDirection::kForward ? "activations" : "gradients") +
         " of stage " + std::to_string(stage);
}

// Only the pool refers to the tensor and its memory: a receive may overwrite it.
bool unreferenced(const at::Tensor& tensor) {
  return tensor.use_count() == 1 && tensor.storage().use_count() == 1;
}

}  // namespace

void RecvBuffers::add_pool(int stage, FlowDirection direction, const std::vector<TensorMeta>& metas,
                           int slots) {
  const PoolKey key{stage, static_cast<int>(direction)};
  if (pools_.count(key)) {
    throw Error("receive buffers for the " + describe_pool(stage, direction) + " set up twice");
  }
  Pool& added = pools_[key];
  added.metas = metas;
  for (int i = 0; i < slots; ++i) add_slot(added);
}

RecvBuffers::Pool& RecvBuffers::pool(int stage, FlowDirection direction) {
  return const_cast<Pool&>(static_cast<const RecvBuffers&>(*this).pool(stage, direction));
}

const RecvBuffers::Pool& RecvBuffers::pool(int stage, FlowDirection direction) const {
  auto found = pools_.find({stage, static_cast<int>(direction)});
  if (found == pools_.end()) {
    throw Error("no receive buffer for the " + describe_pool(stage, direction) +
                ": the plan receives them but setup did not allocate any");
  }
  return found->second;
}

void RecvBuffers::add_slot(Pool& pool) {
  std::vector<at::Tensor> tensors;
  for (const auto& meta : pool.metas) {
    tensors.push_back(meta.allocate());
    ++allocations_;
    bytes_ += static_cast<std::int64_t>(tensors.back().nbytes());
  }
  pool.slots.push_back(std::move(tensors));
  pool.taken.push_back(false);
}

int RecvBuffers::take_free_slot(int stage, FlowDirection direction) {
  Pool& found = pool(stage, direction);
  for (std::size_t i = 0; i < found.slots.size(); ++i) {
    if (found.taken[i]) continue;
    bool free = true;
    for (const at::Tensor& tensor : found.slots[i]) free = free && unreferenced(tensor);
    if (!free) continue;
    found.taken[i] = true;
    return static_cast<int>(i);
  }
  return -1;
}

int RecvBuffers::take_slot(int stage, FlowDirection direction) {
  const int free = take_free_slot(stage, direction);
  if (free >= 0) return free;
  Pool& found = pool(stage, direction);
  add_slot(found);
  found.taken.back() = true;
  return static_cast<int>(found.slots.size()) - 1;
}

void RecvBuffers::give_back(int stage, FlowDirection direction, int slot) {
  pool(stage, direction).taken.at(static_cast<std::size_t>(slot)) = false;
}

const std::vector<at::Tensor>& RecvBuffers::tensors(int stage, FlowDirection direction,
                                                    int slot) const {
  return pool(stage, direction).slots.at(static_cast<std::size_t>(slot));
}

int RecvBuffers::slots(int stage, FlowDirection direction) const {
  auto found = pools_.find({stage, static_cast<int>(direction)});
  return found == pools_.end() ? 0 : static_cast<int>(found->second.slots.size());
}

}  // namespace baton
