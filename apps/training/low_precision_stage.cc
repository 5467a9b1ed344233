#include "low_precision_stage.h"

#include <ATen/ATen.h>

namespace baton_app {
namespace {

// As Megatron's fp32_to_float16 and float16_to_fp32: only tensors of dtype `from` are cast
// (a float64 or integer tensor passes as it is).
std::vector<at::Tensor> cast_all(const std::vector<at::Tensor>& tensors, c10::ScalarType from,
                                 c10::ScalarType to) {
  std::vector<at::Tensor> cast;
  cast.reserve(tensors.size());
  for (const at::Tensor& tensor : tensors) {
    cast.push_back(tensor.defined() && tensor.scalar_type() == from ? tensor.to(to) : tensor);
  }
  return cast;
}

}  // namespace

LowPrecisionStage::LowPrecisionStage(std::shared_ptr<baton::Stage> stage, c10::ScalarType dtype,
                                     bool last)
    : stage_(std::move(stage)), dtype_(dtype), last_(last) {}

std::vector<at::Tensor> LowPrecisionStage::forward(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> outputs = stage_->forward(cast_all(inputs, at::kFloat, dtype_));
  return last_ ? cast_all(outputs, dtype_, at::kFloat) : outputs;
}

}  // namespace baton_app
