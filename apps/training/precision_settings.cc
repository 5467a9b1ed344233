#include "precision_settings.h"

namespace baton_app {

const baton::Choices<ComputePrecision>& compute_precision_choices() {
  static const baton::Choices<ComputePrecision> choices = {{"fp32", ComputePrecision::kFp32},
                                                           {"bf16", ComputePrecision::kBf16},
                                                           {"fp16", ComputePrecision::kFp16}};
  return choices;
}

const baton::Choices<WirePrecision>& wire_precision_choices() {
  static const baton::Choices<WirePrecision> choices = {{"auto", WirePrecision::kAuto},
                                                        {"fp32", WirePrecision::kFp32},
                                                        {"bf16", WirePrecision::kBf16},
                                                        {"fp16", WirePrecision::kFp16}};
  return choices;
}

const baton::Choices<ReducePrecision>& reduce_precision_choices() {
  static const baton::Choices<ReducePrecision> choices = {{"fp32", ReducePrecision::kFp32},
                                                          {"bf16", ReducePrecision::kBf16}};
  return choices;
}

const baton::Choices<ParamPrecision>& param_precision_choices() {
  static const baton::Choices<ParamPrecision> choices = {{"fp32", ParamPrecision::kFp32},
                                                         {"bf16", ParamPrecision::kBf16}};
  return choices;
}

const baton::Choices<LossScaling>& loss_scaling_choices() {
  static const baton::Choices<LossScaling> choices = {
      {"auto", LossScaling::kAuto}, {"dynamic", LossScaling::kDynamic}, {"off", LossScaling::kOff}};
  return choices;
}

PrecisionSettings read_precision_settings(const baton::Config& config) {
  const baton::ParamValues& precision = config.section("precision");
  PrecisionSettings settings;
  settings.compute = baton::read_choice(precision, "compute", compute_precision_choices());
  settings.wire = baton::read_choice(precision, "wire", wire_precision_choices());
  settings.reduce = baton::read_choice(precision, "reduce", reduce_precision_choices());
  settings.params = baton::read_choice(precision, "params", param_precision_choices());
  settings.loss_scaling = baton::read_choice(precision, "loss_scale", loss_scaling_choices());
  // auto: what fp16 needs and bf16 (float32's range) does not.
  settings.loss_scale.enabled = settings.loss_scaling.value == LossScaling::kDynamic ||
                                (settings.loss_scaling.value == LossScaling::kAuto &&
                                 settings.compute.value == ComputePrecision::kFp16);
  settings.loss_scale.init = precision.get_float("loss_scale_init");
  settings.loss_scale.growth_interval = precision.get_int("loss_scale_growth_interval");
  settings.loss_scale.min = precision.get_float("loss_scale_min");
  return settings;
}

}  // namespace baton_app
