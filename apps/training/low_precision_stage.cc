#include "low_precision_stage.h"

#include <ATen/ATen.h>

namespace baton_app {

std::vector<at::Tensor> cast_tensors(const std::vector<at::Tensor>& tensors, c10::ScalarType from,
                                     c10::ScalarType to) {
  std::vector<at::Tensor> cast;
  cast.reserve(tensors.size());
  for (const at::Tensor& tensor : tensors) {
    cast.push_back(tensor.defined() && tensor.scalar_type() == from ? tensor.to(to) : tensor);
  }
  return cast;
}

LowPrecisionStage::LowPrecisionStage(std::shared_ptr<baton::Stage> stage, c10::ScalarType dtype,
                                     bool last)
    : stage_(std::move(stage)), dtype_(dtype), last_(last) {}

std::vector<at::Tensor> LowPrecisionStage::forward(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> outputs = stage_->forward(cast_tensors(inputs, at::kFloat, dtype_));
  return last_ ? cast_tensors(outputs, dtype_, at::kFloat) : outputs;
}

}  // namespace baton_app
