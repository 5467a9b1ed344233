// Internal: which tensors carry gradients between stages. Integer and boolean tensors (token
// ids, masks) cross a stage boundary forwards only: no gradient is sent back for them.
#pragma once

#include <ATen/core/Tensor.h>

#include "baton/tensor_meta.h"

namespace baton {

inline bool is_differentiable(const TensorMeta& meta) {
  return at::isFloatingType(meta.dtype) || at::isComplexType(meta.dtype);
}

}  // namespace baton
