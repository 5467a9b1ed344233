// Reading tensors written by Python: NumPy's .npy (numpy.save) and PyTorch's .pt
// (torch.save of one tensor), and raw token files.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

namespace baton_models {

// `.npy` (little-endian bool/uint8/int8/int16/uint16/int32/int64/float16/float32/float64,
// C order) or `.pt` (a tensor saved with torch.save), chosen by extension. Throws
// baton::ConfigError naming `what` (e.g. "data.inputs") and the file, and what is wrong.
at::Tensor read_tensor_file(const std::string& path, const std::string& what);

// A whole 1-D token stream as int64 (token_stream.h reads one without loading it): `format` "bytes"
// (a text read as bytes), "uint16" or "int32" (raw little-endian), "npy" (a 1-D integer array), or
// "auto" (.npy -> npy, else bytes).
at::Tensor read_token_file(const std::string& path, const std::string& format,
                           const std::string& what);

}  // namespace baton_models
