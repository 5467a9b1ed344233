// The precision section: the dtypes a step computes, sends, reduces and keeps its parameters
// in. No LibTorch.
#pragma once

#include <cstdint>

#include "baton/config.h"
#include "baton/setting.h"

namespace baton_app {

enum class ComputePrecision { kFp32, kBf16, kFp16 };      // precision.compute
enum class WirePrecision { kAuto, kFp32, kBf16, kFp16 };  // precision.wire
enum class ReducePrecision { kFp32, kBf16 };              // precision.reduce
enum class ParamPrecision { kFp32, kBf16 };               // precision.params
enum class LossScaling { kAuto, kDynamic, kOff };         // precision.loss_scale

// fp16 loss scaling as torch.cuda.amp.GradScaler's defaults: the loss multiplied by `init`
// at first, the scale halved after each step with an inf or a nan in the gradients (the step
// skipped) and doubled after `growth_interval` finite steps in a row. DeepSpeed's rule below
// it: a step that overflows at `min` ends the run (the scale cannot go lower).
struct LossScaleSettings {
  bool enabled = false;  // loss_scale: dynamic, or auto with compute: fp16
  double init = 65536.0;
  std::int64_t growth_interval = 2000;
  double min = 1.0;
  static constexpr double kGrowthFactor = 2.0;   // GradScaler's growth_factor
  static constexpr double kBackoffFactor = 0.5;  // GradScaler's backoff_factor
};

struct PrecisionSettings {
  baton::Setting<ComputePrecision> compute;
  baton::Setting<WirePrecision> wire;
  baton::Setting<ReducePrecision> reduce;
  baton::Setting<ParamPrecision> params;
  baton::Setting<LossScaling> loss_scaling;
  LossScaleSettings loss_scale;
};

// The words of each key, for the section's declaration (config_sections.cc).
const baton::Choices<ComputePrecision>& compute_precision_choices();
const baton::Choices<WirePrecision>& wire_precision_choices();
const baton::Choices<ReducePrecision>& reduce_precision_choices();
const baton::Choices<ParamPrecision>& param_precision_choices();
const baton::Choices<LossScaling>& loss_scaling_choices();

PrecisionSettings read_precision_settings(const baton::Config& config);

}  // namespace baton_app
