// Internal: precision.wire — the dtype floating tensors cross between ranks in. Empty: as the
// stage produced them. Set: activations and their gradients are cast to it for the transfer
// and back to the dtype the stage gave (the metadata handshake's) on arrival, so a stage
// computes as it would without the cast, on values rounded once at the crossing. Integer and
// boolean tensors (token ids, masks) cross as they are.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <map>
#include <optional>
#include <vector>

#include "baton/tensor_meta.h"

namespace baton {

using WireDtype = std::optional<c10::ScalarType>;

// What crosses for a tensor of `meta`: the receive buffers are made from it.
TensorMeta on_wire(TensorMeta meta, WireDtype wire);
std::map<int, std::vector<TensorMeta>> on_wire(const std::map<int, std::vector<TensorMeta>>& metas,
                                               WireDtype wire);

// The tensor as it is sent: cast when `wire` is set and it is floating; contiguous.
at::Tensor to_wire(const at::Tensor& tensor, WireDtype wire);
// An arrived tensor as the stage gave it: back to `meta`'s dtype when the wire changed it.
at::Tensor from_wire(const at::Tensor& arrived, const TensorMeta& meta);

}  // namespace baton
