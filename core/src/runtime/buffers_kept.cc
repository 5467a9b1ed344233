#include "baton/runtime/buffers_kept.h"

#include <ATen/ATen.h>

namespace baton {

BuffersKept::BuffersKept(const std::vector<std::pair<std::string, at::Tensor>>& buffers) {
  at::NoGradGuard no_grad;
  for (const auto& named : buffers) {
    if (named.second.defined()) kept_.emplace_back(named.second, named.second.clone());
  }
}

BuffersKept::~BuffersKept() {
  at::NoGradGuard no_grad;
  for (auto& [buffer, copy] : kept_) buffer.copy_(copy);
}

}  // namespace baton
