#include "baton/runtime/recv_buffers.h"

#include "baton/error.h"

namespace baton {
namespace {

std::string describe_key(int stage, int microbatch, FlowDirection direction) {
  return std::string(direction == FlowDirection::kForward ? "activations" : "gradients") +
         " of stage " + std::to_string(stage) + ", microbatch " + std::to_string(microbatch);
}

}  // namespace

void RecvBuffers::allocate(int stage, int microbatch, FlowDirection direction,
                           const std::vector<TensorMeta>& metas) {
  auto key = std::make_tuple(stage, microbatch, static_cast<int>(direction));
  if (buffers_.count(key)) {
    throw Error("receive buffers for " + describe_key(stage, microbatch, direction) +
                " allocated twice");
  }
  std::vector<at::Tensor> tensors;
  for (const auto& meta : metas) {
    tensors.push_back(meta.allocate());
    ++allocations_;
    bytes_ += static_cast<std::int64_t>(tensors.back().nbytes());
  }
  buffers_.emplace(key, std::move(tensors));
}

const std::vector<at::Tensor>& RecvBuffers::get(int stage, int microbatch,
                                                FlowDirection direction) const {
  auto found = buffers_.find(std::make_tuple(stage, microbatch, static_cast<int>(direction)));
  if (found == buffers_.end()) {
    throw Error("no receive buffer for " + describe_key(stage, microbatch, direction) +
                ": the plan receives it but setup did not allocate it");
  }
  return found->second;
}

}  // namespace baton
