#include "master_weights.h"

#include <ATen/ATen.h>

#include <map>

#include "baton/runtime/gradient_sync.h"

namespace baton_app {
namespace {

// A float32 copy of `tensor`, then `tensor` itself cast to `dtype` in place: set_data keeps
// the tensor (and the module slot holding it) the same object.
at::Tensor keep_float32_and_cast(at::Tensor& tensor, c10::ScalarType dtype) {
  at::Tensor copy = tensor.detach().to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  tensor.set_data(tensor.detach().to(dtype));
  return copy;
}

}  // namespace

MasterWeights::MasterWeights(LocalStages& local, c10::ScalarType dtype) {
  const at::NoGradGuard no_grad;
  std::map<const void*, at::Tensor> master_of;
  std::vector<at::Tensor> params;
  for (auto& [name, param] : local.named_params) {
    const void* key = param.unsafeGetTensorImpl();
    auto found = master_of.find(key);
    if (found == master_of.end()) {
      at::Tensor master = keep_float32_and_cast(param, dtype);
      master.set_requires_grad(param.requires_grad());
      found = master_of.emplace(key, master).first;
      params_.emplace_back(param, master);
      params.push_back(master);
    }
    param = found->second;  // the name now stands for the master
  }
  local.params = std::move(params);
  for (auto& [name, buffer] : local.named_buffers) {
    if (!at::isFloatingType(buffer.scalar_type())) continue;
    at::Tensor copy = keep_float32_and_cast(buffer, dtype);
    buffers_.emplace_back(buffer, copy);
    buffer = copy;
  }
}

void MasterWeights::fold_gradients() {
  const at::NoGradGuard no_grad;
  for (const auto& [param, master] : params_) baton::fold_into_master(param, master);
}

void MasterWeights::after_step() {
  const at::NoGradGuard no_grad;
  for (auto& [param, master] : params_) param.copy_(master);
  for (auto& [buffer, copy] : buffers_) copy.copy_(buffer);
}

void MasterWeights::after_load() {
  const at::NoGradGuard no_grad;
  for (auto& [param, master] : params_) param.copy_(master);
  for (auto& [buffer, copy] : buffers_) buffer.copy_(copy);
}

}  // namespace baton_app
