// precision.params: bf16 — the stages hold their parameters (and floating buffers) in bf16,
// half the weight memory, and the optimizer keeps float32 master copies, as Megatron's
// Float16OptimizerWithFloat16Params does: every microbatch's bf16 gradient is added into the
// master's float32 .grad (GradientSync's main gradients), the optimizer steps the masters,
// and the result is cast back into the stages. Checkpoints, the equivalence dump and baton
// export see only the masters, so they hold the float32 model under its own names.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "local_stages.h"

namespace baton_app {

class MasterWeights {
 public:
  // Casts `local`'s parameters and floating buffers to `dtype` in place (the stages' modules
  // see it: the tensors keep their identity) after taking float32 copies, and points
  // local.params, local.named_params and local.named_buffers at the copies. Two names of one
  // tensor (a tie within the rank) share one master.
  MasterWeights(LocalStages& local, c10::ScalarType dtype);

  // (a stage's parameter, its master), for GradientSyncOptions::main_gradients.
  const std::vector<std::pair<at::Tensor, at::Tensor>>& pairs() const { return params_; }

  // For a loop without GradientSync (the bench's unpipelined reference): after a
  // microbatch's backward, each parameter's gradient added into its master's and dropped.
  void fold_gradients();
  // After the optimizer's step: the updated masters cast into the stages, the stages' buffers
  // (which their forwards may update) copied into their float32 copies.
  void after_step();
  // After the masters were loaded (a resumed checkpoint): the stages take them.
  void after_load();

 private:
  std::vector<std::pair<at::Tensor, at::Tensor>> params_;   // (stage's, master)
  std::vector<std::pair<at::Tensor, at::Tensor>> buffers_;  // (stage's, float32 copy)
};

}  // namespace baton_app
