#include "gradient_clipping.h"

#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/runtime/gradient_sync.h"

namespace baton_app {

double gradient_norm(const std::vector<at::Tensor>& params) {
  const c10::Device device = params.empty() ? c10::Device(c10::kCPU) : params.front().device();
  return std::sqrt(baton::gradient_squares(params, device).item<double>());
}

double clip_gradients(const std::vector<at::Tensor>& params, double norm, double max_norm,
                      int step) {
  if (!std::isfinite(norm)) {
    throw baton::Error("step " + std::to_string(step) + ": the gradient's norm is " +
                       std::to_string(norm) +
                       " (optimizer.clip_grad_norm): some gradient holds a nan or inf — "
                       "training diverged (try a smaller optimizer.lr or a warm-up, "
                       "lr_schedule.warmup_steps), or the batch holds non-finite values; the "
                       "run stops instead of training on it");
  }
  // clip_grad_norm_'s factor, computed the way it computes it (in the gradients' float32).
  const double factor =
      static_cast<double>(static_cast<float>(max_norm) / (static_cast<float>(norm) + 1e-6f));
  if (factor >= 1.0) return 1.0;
  std::vector<at::Tensor> grads;
  for (const at::Tensor& param : params) {
    if (param.grad().defined()) grads.push_back(param.grad());
  }
  at::_foreach_mul_(grads, factor);
  return factor;
}

}  // namespace baton_app
