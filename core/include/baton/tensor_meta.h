// What a tensor crossing a stage boundary must look like: shape, dtype, and (for the strict
// validator) strides and device. Exchanged between ranks at setup; receive buffers are
// allocated from it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "baton/export.h"

namespace baton {

struct BATON_API TensorMeta {
  std::vector<std::int64_t> shape;
  at::ScalarType dtype = at::ScalarType::Float;
  std::vector<std::int64_t> strides;  // of a contiguous tensor of `shape` unless recorded
  at::Device device = at::kCPU;

  static TensorMeta of(const at::Tensor& tensor);

  // "[8, 512] float32"
  std::string str() const;
  // "[8, 512] float32, strides [512, 1], cpu"
  std::string detailed_str() const;

  bool same_shape_and_dtype(const TensorMeta& other) const;
  bool operator==(const TensorMeta& other) const;
  bool operator!=(const TensorMeta& other) const { return !(*this == other); }

  // A tensor with this shape, dtype and device, uninitialised contents.
  at::Tensor allocate() const;
};

// "float32", "bfloat16", "int64": the names people know from PyTorch.
BATON_API std::string dtype_name(at::ScalarType dtype);

// Flat int64 encoding of a list of metas, for sending over a transport at setup: shapes and
// dtypes only (not strides, not the device).
BATON_API std::vector<std::int64_t> encode_metas(const std::vector<TensorMeta>& metas);
// Inverse of encode_metas, the metas placed on the receiver's `device` (where its buffers
// are allocated); throws baton::Error on malformed input.
BATON_API std::vector<TensorMeta> decode_metas(const std::vector<std::int64_t>& encoded,
                                               c10::Device device = c10::kCPU);

}  // namespace baton
