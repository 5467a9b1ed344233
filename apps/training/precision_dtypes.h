// The precision section as the dtypes the executor takes: empty where nothing is cast.
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>

#include "precision_settings.h"

namespace baton_app {

// precision.compute: the autocast dtype (bf16, fp16); fp32: none.
std::optional<c10::ScalarType> autocast_dtype(ComputePrecision compute);
// precision.wire: what floating tensors cross ranks as; auto: as the stage produced them.
std::optional<c10::ScalarType> wire_dtype(WirePrecision wire);
// precision.reduce: what the replicas' gradients are all-reduced as; fp32 keeps the
// gradient's own dtype.
std::optional<c10::ScalarType> reduce_dtype(ReducePrecision reduce);

}  // namespace baton_app
