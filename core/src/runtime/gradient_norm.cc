#include "gradient_norm.h"

#include <ATen/ATen.h>

#include <cmath>
#include <set>
#include <vector>

#include "baton/runtime/gradient_sync.h"

namespace baton {

at::Tensor gradient_squares(const std::vector<at::Tensor>& params, c10::Device device) {
  const std::vector<at::Tensor> grads = defined_gradients(params);
  if (grads.empty()) return at::zeros({1}, at::TensorOptions().dtype(at::kDouble).device(device));
  // Each tensor's norm in its own dtype, as clip_grad_norm_ takes them (no copy of a
  // gradient, one kernel launch for all); their squares added in double. A device whose
  // backend lacks the fused kernel runs it on the CPU (LibTorch's fallback): the sum is moved
  // back, a no-op where it is already there.
  return at::stack(at::_foreach_norm(grads, 2))
      .to(at::kDouble)
      .pow(2)
      .sum()
      .reshape({1})
      .to(device);
}

GradientNorm::GradientNorm(const Topology& topology, int replica, SyncGroups& groups)
    : topology_(topology), replica_(replica), groups_(groups) {}

void GradientNorm::join(const GradientHolders& holders,
                        const std::set<std::string>& counted_elsewhere) {
  // A tensor two local stages share (a tie within this rank) is counted once.
  counted_ = distinct_holders(holders, counted_elsewhere);
  if (topology_.pipeline_ranks <= 1) return;
  group_ = groups_.join(topology_.pipeline_of(replica_),
                        "the gradient's norm over the pipeline (optimizer.clip_grad_norm)");
}

double GradientNorm::measure() {
  at::Tensor squares = gradient_squares(counted_, groups_.device());
  if (group_ >= 0) groups_.sum(group_, {squares});
  return std::sqrt(squares.item<double>());
}

}  // namespace baton
