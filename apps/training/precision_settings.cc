#include "precision_settings.h"

namespace baton_app {

PrecisionSettings read_precision_settings(const baton::Config& config) {
  PrecisionSettings settings;
  settings.compute = baton::read_choice<ComputePrecision>(config.section("precision"), "compute",
                                                          {{"fp32", ComputePrecision::kFp32},
                                                           {"bf16", ComputePrecision::kBf16},
                                                           {"fp16", ComputePrecision::kFp16}});
  return settings;
}

}  // namespace baton_app
