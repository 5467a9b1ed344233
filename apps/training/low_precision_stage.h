// A stage whose parameters are held in a low precision (precision.params: bf16), wrapped as
// Megatron's Float16Module wraps a model: float32 inputs are cast to the stage's dtype on the
// way in (the first stage's come from the data; later stages' arrive in it already), and the
// last stage's outputs of that dtype to float32 on the way out, so the loss is taken in
// float32. Everything else is the wrapped stage's.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/stage.h"

namespace baton_app {

// As Megatron's fp32_to_float16 and float16_to_fp32: the tensors of dtype `from` cast to `to`
// (a float64 or integer tensor passes as it is).
std::vector<at::Tensor> cast_tensors(const std::vector<at::Tensor>& tensors, c10::ScalarType from,
                                     c10::ScalarType to);

class LowPrecisionStage : public baton::Stage {
 public:
  LowPrecisionStage(std::shared_ptr<baton::Stage> stage, c10::ScalarType dtype, bool last);

  int index() const override { return stage_->index(); }
  std::string describe() const override { return stage_->describe(); }
  std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs) override;
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const override {
    return stage_->named_parameters();
  }
  std::vector<std::pair<std::string, at::Tensor>> named_buffers() const override {
    return stage_->named_buffers();
  }
  void set_training(bool training) override { stage_->set_training(training); }

 private:
  std::shared_ptr<baton::Stage> stage_;
  c10::ScalarType dtype_;
  bool last_;
};

}  // namespace baton_app
