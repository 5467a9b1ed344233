// Reading tensors written by Python: NumPy's .npy (numpy.save) and PyTorch's .pt
// (torch.save of one tensor), and raw token files.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "model_settings.h"

namespace baton_models {

// `.npy` (little-endian bool/uint8/int8/int16/uint16/int32/int64/float16/float32/float64,
// C order) or `.pt` (a tensor saved with torch.save), chosen by extension. Throws
// baton::ConfigError naming `what` (e.g. "data.inputs") and the file, and what is wrong.
at::Tensor read_tensor_file(const std::string& path, const std::string& what);

// A whole 1-D token stream as int64, read as `format` says (token_stream.h reads one without
// loading it).
at::Tensor read_token_file(const std::string& path, TokenFormat format, const std::string& what);

}  // namespace baton_models
