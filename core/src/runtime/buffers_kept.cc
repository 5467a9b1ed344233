#include "baton/runtime/buffers_kept.h"

#include <ATen/ATen.h>
#include <ATen/core/LegacyTypeDispatch.h>

namespace baton {

BuffersKept::BuffersKept(const std::vector<std::pair<std::string, at::Tensor>>& buffers) {
  at::NoGradGuard no_grad;
  for (const auto& named : buffers) {
    if (named.second.defined()) kept_.emplace_back(named.second, named.second.clone());
  }
}

BuffersKept::~BuffersKept() {
  // Below autograd's in-place tracking: putting a buffer back is not a change a graph built
  // meanwhile must see. A recomputed forward's graph holds a BatchNorm's running statistics
  // (its training-mode backward does not read them); bumping their version would fail it.
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  for (auto& [buffer, copy] : kept_) buffer.copy_(copy);
}

}  // namespace baton
