// What a run writes for other processes to read (checkpoints, their optimizer state, dumps)
// holds CPU tensors whatever world.device is, so it loads on any machine.
#pragma once

#include <ATen/core/Tensor.h>

namespace baton_app {

// A copy on the CPU, detached from autograd; a copy even of a CPU tensor (the caller keeps it
// while the original trains on).
inline at::Tensor host_copy(const at::Tensor& tensor) {
  return tensor.detach().to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);
}

}  // namespace baton_app
