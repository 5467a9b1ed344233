#include "scaled_gradients.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <set>

namespace baton {

ScaledGradients::ScaledGradients(const Topology& topology, SyncGroups& groups)
    : topology_(topology), groups_(groups) {}

void ScaledGradients::join(const GradientHolders& holders) {
  std::set<const void*> seen;
  for (const auto& entry : holders) {
    for (const auto& named : entry.second) {
      if (seen.insert(named.second.unsafeGetTensorImpl()).second) held_.push_back(named.second);
    }
  }
  if (topology_.world_size() <= 1) return;
  group_ = groups_.join(topology_.in_every_replica(topology_.pipeline_of(0)),
                        "whether any gradient overflowed (precision.loss_scale)");
}

bool ScaledGradients::unscale(double scale) {
  std::vector<at::Tensor> grads;
  for (const at::Tensor& held : held_) {
    if (held.grad().defined()) grads.push_back(held.grad());
  }
  // 0 where every gradient is finite; an inf or a nan otherwise. The largest magnitude
  // finds both without overflowing as a sum of squares could (max propagates a nan).
  at::Tensor found = at::zeros({1}, groups_.options(at::kDouble));
  if (!grads.empty()) {
    at::_foreach_mul_(grads, 1.0 / scale);
    const at::Tensor largest =
        at::stack(at::_foreach_norm(grads, std::numeric_limits<double>::infinity()))
            .max()
            .to(at::kDouble)
            .reshape({1})
            .to(groups_.device());
    found = at::where(at::isfinite(largest), at::zeros_like(largest), at::ones_like(largest));
  }
  if (group_ >= 0) groups_.sum(group_, {found});
  return found.item<double>() > 0;
}

}  // namespace baton
