// The precision section: the dtypes a step computes in. No LibTorch.
#pragma once

#include "baton/config.h"
#include "baton/setting.h"

namespace baton_app {

enum class ComputePrecision { kFp32, kBf16, kFp16 };  // precision.compute

struct PrecisionSettings {
  baton::Setting<ComputePrecision> compute;
};

PrecisionSettings read_precision_settings(const baton::Config& config);

}  // namespace baton_app
