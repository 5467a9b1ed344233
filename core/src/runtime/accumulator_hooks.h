// Internal: a callback after every backward that reaches a parameter — a post-hook on its
// gradient accumulator, which runs once per backward with the parameter's summed gradient in
// .grad (what DDP's Reducer and Megatron's main_grad hang on). Removed with the object.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace torch {
namespace autograd {
struct Node;
}
}  // namespace torch

namespace baton {

class AccumulatorHooks {
 public:
  AccumulatorHooks() = default;
  ~AccumulatorHooks();
  AccumulatorHooks(const AccumulatorHooks&) = delete;
  AccumulatorHooks& operator=(const AccumulatorHooks&) = delete;

  // `param` must be a leaf that requires a gradient. Hooks on one accumulator run in the
  // order they were added.
  void add(const at::Tensor& param, std::function<void()> after_accumulation);

 private:
  std::vector<std::pair<std::shared_ptr<torch::autograd::Node>, std::uintptr_t>> installed_;
};

}  // namespace baton
