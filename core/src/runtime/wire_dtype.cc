#include "wire_dtype.h"

#include <ATen/ATen.h>

namespace baton {

TensorMeta on_wire(TensorMeta meta, WireDtype wire) {
  if (wire && at::isFloatingType(meta.dtype)) meta.dtype = *wire;
  return meta;
}

std::map<int, std::vector<TensorMeta>> on_wire(const std::map<int, std::vector<TensorMeta>>& metas,
                                               WireDtype wire) {
  std::map<int, std::vector<TensorMeta>> crossing;
  for (const auto& [stage, list] : metas) {
    std::vector<TensorMeta>& crossed = crossing[stage];
    for (const TensorMeta& meta : list) crossed.push_back(on_wire(meta, wire));
  }
  return crossing;
}

at::Tensor to_wire(const at::Tensor& tensor, WireDtype wire) {
  if (wire && at::isFloatingType(tensor.scalar_type()) && tensor.scalar_type() != *wire) {
    return tensor.to(*wire).contiguous();
  }
  return tensor.contiguous();
}

at::Tensor from_wire(const at::Tensor& arrived, const TensorMeta& meta) {
  if (arrived.scalar_type() == meta.dtype || !at::isFloatingType(arrived.scalar_type())) {
    return arrived;
  }
  return arrived.to(meta.dtype);
}

}  // namespace baton
