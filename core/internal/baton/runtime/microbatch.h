// Splitting a batch into microbatches and merging results back.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "baton/export.h"

namespace baton {

// Splits each tensor of `batch` along `dim` into `microbatches` equal chunks:
// result[m][i] is chunk m of tensor i. Throws ConfigError when a tensor's size along `dim`
// is not divisible (naming the tensor, its size and the microbatch count, and the sizes
// that would work), or when tensors disagree on the batch size.
BATON_API std::vector<std::vector<at::Tensor>> split_microbatches(
    const std::vector<at::Tensor>& batch, int microbatches, int dim = 0);

// Concatenates per-microbatch tensors back along `dim`.
BATON_API at::Tensor merge_microbatches(const std::vector<at::Tensor>& chunks, int dim = 0);

}  // namespace baton
