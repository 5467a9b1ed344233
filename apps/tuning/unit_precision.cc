#include "unit_precision.h"

#include <ATen/ATen.h>

#include "baton/runtime/autocast_scope.h"
#include "training/low_precision_stage.h"
#include "training/precision_dtypes.h"

namespace baton_app {

UnitPrecision::UnitPrecision(const PrecisionSettings& precision)
    : wire_(wire_dtype(precision.wire.value)) {
  if (precision.params.value == ParamPrecision::kBf16) {
    parameters_ = c10::kBFloat16;  // computes in its own dtype, without autocast
  } else if (autocast_dtype(precision.compute.value)) {
    autocast_ = c10::kBFloat16;
  }
}

void UnitPrecision::cast_chain(baton::UnitChain& chain) const {
  if (!parameters_) return;
  at::NoGradGuard no_grad;
  for (int unit = 0; unit < chain.num_units(); ++unit) {
    for (auto& named : chain.unit_parameters(unit))
      named.second.set_data(named.second.to(*parameters_));
    for (auto& named : chain.unit_buffers(unit)) {
      if (at::isFloatingType(named.second.scalar_type())) {
        named.second.set_data(named.second.to(*parameters_));
      }
    }
  }
}

std::vector<at::Tensor> UnitPrecision::model_inputs(const std::vector<at::Tensor>& inputs) const {
  return parameters_ ? cast_tensors(inputs, at::kFloat, *parameters_) : inputs;
}

std::vector<at::Tensor> UnitPrecision::run_unit(baton::UnitChain& chain, int unit,
                                                const std::vector<at::Tensor>& inputs) const {
  const baton::AutocastScope autocast(c10::kCPU, autocast_);
  return chain.run_unit(unit, inputs);
}

double UnitPrecision::wire_bytes(const std::vector<at::Tensor>& outputs) const {
  double bytes = 0;
  for (const at::Tensor& output : outputs) {
    const bool cast = wire_ && at::isFloatingType(output.scalar_type());  // as on_wire()
    bytes += static_cast<double>(output.numel()) *
             static_cast<double>(cast ? c10::elementSize(*wire_) : output.element_size());
  }
  return bytes;
}

double UnitPrecision::parameter_bytes(const std::vector<at::Tensor>& params) const {
  double bytes = 0;
  for (const at::Tensor& param : params) {
    const bool master = parameters_ && param.scalar_type() == *parameters_;
    bytes += static_cast<double>(param.numel()) *
             static_cast<double>(master ? c10::elementSize(at::kFloat) : param.element_size());
  }
  return bytes;
}

}  // namespace baton_app
