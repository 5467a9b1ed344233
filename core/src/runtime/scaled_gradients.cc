#include "scaled_gradients.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace baton {

ScaledGradients::ScaledGradients(const Topology& topology, SyncGroups& groups)
    : topology_(topology), groups_(groups) {}

void ScaledGradients::join(const GradientHolders& holders) {
  held_ = distinct_holders(holders);
  if (topology_.world_size() <= 1) return;
  group_ = groups_.join(topology_.in_every_replica(topology_.pipeline_of(0)),
                        "whether any gradient overflowed (precision.loss_scale)");
}

bool ScaledGradients::unscale(double scale) {
  const std::vector<at::Tensor> grads = defined_gradients(held_);
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
    found = at::isfinite(largest).logical_not().to(at::kDouble);
  }
  if (group_ >= 0) groups_.sum(group_, {found});
  return found.item<double>() > 0;
}

}  // namespace baton
