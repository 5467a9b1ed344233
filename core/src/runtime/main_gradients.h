// Internal: where each parameter's gradient is kept for the step's synchronisation, and the
// float32 gradients of low-precision parameters (precision.params: bf16) — Megatron's
// main_grad. A bf16 parameter's backward leaves a bf16 .grad; adding the microbatches' in bf16
// would round at every addition (DeepSpeed warns it is "not safe numerically"), so after each
// backward that reached it the gradient is added into its float32 master's .grad and the
// parameter's own dropped. The replicas' buckets, the tied sums, the norm, the clipping and
// the optimizer all see the masters only. One of GradientSync's parts.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "baton/stage.h"

namespace baton {

// By stage, in the order of its named_parameters(): each name with the tensor whose .grad
// holds its gradient for the sync (the parameter, or its float32 master).
using GradientHolders = std::map<int, std::vector<std::pair<std::string, at::Tensor>>>;

// Every tensor `holders` keep a gradient in, once (a tensor two local stages share is one),
// but those named in `left_out`: what a part that reads every gradient of the rank reads.
std::vector<at::Tensor> distinct_holders(const GradientHolders& holders,
                                         const std::set<std::string>& left_out = {});

// The gradients of `holders` that this step defined (a parameter no backward reached has
// none).
std::vector<at::Tensor> defined_gradients(const std::vector<at::Tensor>& holders);

class MainGradients {
 public:
  // `masters`: (parameter, its float32 master) pairs (GradientSyncOptions::main_gradients).
  explicit MainGradients(const std::vector<std::pair<at::Tensor, at::Tensor>>& masters);

  bool empty() const { return master_of_.empty(); }

  // Set up: what holds the gradient of each parameter of `stages`. Throws Error when a
  // master's shape is not its parameter's or it is not a float32 leaf.
  GradientHolders join(const std::map<int, std::shared_ptr<Stage>>& stages);

  // Parameter `param_index` of `stage` has the gradient of one backward (or W) in .grad:
  // added into its master's, then dropped. No-op for a parameter without a master or
  // without a gradient (a tensor two local stages share is folded by the first call).
  void fold(int stage, std::size_t param_index);

 private:
  std::map<const void*, at::Tensor> master_of_;  // by the parameter's TensorImpl
  std::map<int, std::vector<std::pair<at::Tensor, at::Tensor>>> folds_;  // by stage, by index
};

}  // namespace baton
