// The precision section: the dtypes a step computes, sends, reduces and keeps its parameters
// in. No LibTorch.
#pragma once

#include "baton/config.h"
#include "baton/setting.h"

namespace baton_app {

enum class ComputePrecision { kFp32, kBf16, kFp16 };      // precision.compute
enum class WirePrecision { kAuto, kFp32, kBf16, kFp16 };  // precision.wire
enum class ReducePrecision { kFp32, kBf16 };              // precision.reduce
enum class ParamPrecision { kFp32, kBf16 };               // precision.params

struct PrecisionSettings {
  baton::Setting<ComputePrecision> compute;
  baton::Setting<WirePrecision> wire;
  baton::Setting<ReducePrecision> reduce;
  baton::Setting<ParamPrecision> params;
};

// The words of each key, for the section's declaration (config_sections.cc).
const baton::Choices<ComputePrecision>& compute_precision_choices();
const baton::Choices<WirePrecision>& wire_precision_choices();
const baton::Choices<ReducePrecision>& reduce_precision_choices();
const baton::Choices<ParamPrecision>& param_precision_choices();

PrecisionSettings read_precision_settings(const baton::Config& config);

}  // namespace baton_app
