#include "baton/tensor_meta.h"

#include <ATen/ATen.h>

#include "baton/error.h"

namespace baton {
namespace {

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i > 1; --i) strides[i - 2] = strides[i - 1] * shape[i - 1];
  return strides;
}

std::string join(const std::vector<std::int64_t>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(values[i]);
  }
  return text + "]";
}

// The dtypes that cross between ranks, by name, in an order that is only ever appended to:
// a dtype travels as its place in this list (from 1), never as LibTorch's ScalarType number,
// which another LibTorch build may number otherwise.
struct WireDtype {
  const char* name;
  at::ScalarType dtype;
};
constexpr WireDtype kWireDtypes[] = {
    {"float32", at::kFloat},
    {"float64", at::kDouble},
    {"float16", at::kHalf},
    {"bfloat16", at::kBFloat16},
    {"uint8", at::kByte},
    {"int8", at::kChar},
    {"int16", at::kShort},
    {"int32", at::kInt},
    {"int64", at::kLong},
    {"bool", at::kBool},
    {"complex64", at::kComplexFloat},
    {"complex128", at::kComplexDouble},
};
constexpr std::int64_t kWireDtypeCount =
    static_cast<std::int64_t>(sizeof(kWireDtypes) / sizeof(kWireDtypes[0]));

std::string wire_dtype_names() {
  std::string names;
  for (const WireDtype& wire : kWireDtypes) {
    names += (names.empty() ? "" : ", ") + std::string(wire.name);
  }
  return names;
}

std::int64_t wire_code(at::ScalarType dtype) {
  for (std::int64_t i = 0; i < kWireDtypeCount; ++i) {
    if (kWireDtypes[i].dtype == dtype) return i + 1;
  }
  throw Error("a stage's tensor of dtype " + std::string(c10::toString(dtype)) +
              " cannot cross between ranks: baton's metadata knows " + wire_dtype_names());
}

}  // namespace

std::string dtype_name(at::ScalarType dtype) {
  for (const WireDtype& wire : kWireDtypes) {
    if (wire.dtype == dtype) return wire.name;
  }
  return c10::toString(dtype);
}

TensorMeta TensorMeta::of(const at::Tensor& tensor) {
  TensorMeta meta;
  meta.shape = tensor.sizes().vec();
  meta.dtype = tensor.scalar_type();
  meta.strides = tensor.strides().vec();
  meta.device = tensor.device();
  return meta;
}

std::string TensorMeta::str() const {
  return join(shape) + " " + dtype_name(dtype);
}

std::string TensorMeta::detailed_str() const {
  return str() + ", strides " + join(strides.empty() ? contiguous_strides(shape) : strides) + ", " +
         device.str();
}

bool TensorMeta::same_shape_and_dtype(const TensorMeta& other) const {
  return shape == other.shape && dtype == other.dtype;
}

bool TensorMeta::operator==(const TensorMeta& other) const {
  const auto mine = strides.empty() ? contiguous_strides(shape) : strides;
  const auto theirs = other.strides.empty() ? contiguous_strides(other.shape) : other.strides;
  return same_shape_and_dtype(other) && mine == theirs && device == other.device;
}

at::Tensor TensorMeta::allocate() const {
  return at::empty(shape, at::TensorOptions().dtype(dtype).device(device));
}

// Layout: count, then per tensor: dtype (its wire code), rank, shape… No device: where a
// tensor lives is each side's own business (a sender's GPU index means nothing to its
// receiver).
std::vector<std::int64_t> encode_metas(const std::vector<TensorMeta>& metas) {
  std::vector<std::int64_t> encoded{static_cast<std::int64_t>(metas.size())};
  for (const auto& meta : metas) {
    encoded.push_back(wire_code(meta.dtype));
    encoded.push_back(static_cast<std::int64_t>(meta.shape.size()));
    encoded.insert(encoded.end(), meta.shape.begin(), meta.shape.end());
  }
  return encoded;
}

std::vector<TensorMeta> decode_metas(const std::vector<std::int64_t>& encoded, c10::Device device) {
  std::size_t at = 0;
  auto next = [&]() -> std::int64_t {
    if (at >= encoded.size()) {
      throw Error("malformed tensor metadata: " + std::to_string(encoded.size()) +
                  " values end in the middle of a tensor description");
    }
    return encoded[at++];
  };
  const std::int64_t count = next();
  if (count < 0 || count > 4096)
    throw Error("malformed tensor metadata: count " + std::to_string(count));
  // Receive buffers are allocated from these values: each is checked before it is used, so
  // a damaged message is refused instead of becoming an invalid dtype or a huge buffer.
  constexpr std::int64_t kLargestElementCount = std::int64_t{1} << 40;
  std::vector<TensorMeta> metas(static_cast<std::size_t>(count));
  for (auto& meta : metas) {
    const std::int64_t dtype = next();
    if (dtype < 1 || dtype > kWireDtypeCount) {
      throw Error("malformed tensor metadata: dtype code " + std::to_string(dtype) +
                  " is none of baton's (1 to " + std::to_string(kWireDtypeCount) + ": " +
                  wire_dtype_names() + "); the sender may run a newer baton");
    }
    meta.dtype = kWireDtypes[dtype - 1].dtype;
    meta.device = device;
    const std::int64_t rank = next();
    if (rank < 0 || rank > 64)
      throw Error("malformed tensor metadata: rank " + std::to_string(rank));
    std::int64_t elements = 1;
    for (std::int64_t d = 0; d < rank; ++d) {
      const std::int64_t extent = next();
      if (extent < 0 || extent > kLargestElementCount ||
          (extent > 0 && elements > kLargestElementCount / extent)) {
        throw Error("malformed tensor metadata: a shape of more than 2^40 elements (dimension " +
                    std::to_string(d) + " is " + std::to_string(extent) + ")");
      }
      elements *= extent;
      meta.shape.push_back(extent);
    }
  }
  if (at != encoded.size()) throw Error("malformed tensor metadata: trailing values");
  return metas;
}

}  // namespace baton
