#include "accumulator_hooks.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace baton {

AccumulatorHooks::~AccumulatorHooks() {
  for (auto& [accumulator, key] : installed_) accumulator->del_post_hook(key);
}

void AccumulatorHooks::add(const at::Tensor& param, std::function<void()> after_accumulation) {
  std::shared_ptr<torch::autograd::Node> accumulator =
      torch::autograd::impl::grad_accumulator(param);
  const std::uintptr_t key =
      accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
          [callback = std::move(after_accumulation)](const torch::autograd::variable_list& outputs,
                                                     const torch::autograd::variable_list&) {
            callback();
            return outputs;
          }));
  installed_.emplace_back(std::move(accumulator), key);
}

}  // namespace baton
