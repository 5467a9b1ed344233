// A stage: one contiguous piece of a model, run on one rank. It keeps the parameter names
// of the full model ("layers.5.attn.proj.weight"), so a stage's state dict is a slice of
// the full model's and checkpoints map 1:1 onto the unpipelined model.
//
// A stage only computes; the executor owns microbatches, autograd state, communication
// and checks.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "baton/export.h"
#include "baton/plugin_torch_version.h"

namespace baton {

class BATON_API Stage {
 public:
  virtual ~Stage();

  // Position in the pipeline (0 = first).
  virtual int index() const = 0;
  // For messages: "stage 1 (layers.2 .. layers.3)".
  virtual std::string describe() const = 0;

  // Runs the stage with autograd recording. Inputs of the first stage come from the data;
  // later stages receive the previous stage's outputs.
  virtual std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs) = 0;

  // The stage's parameters under their names in the full model, in a fixed order.
  virtual std::vector<std::pair<std::string, at::Tensor>> named_parameters() const = 0;

  // The buffers the full model's state dict holds for this stage (a causal mask, a norm's
  // running statistics), under their full-model names; checkpoints and exports keep them.
  // None by default.
  virtual std::vector<std::pair<std::string, at::Tensor>> named_buffers() const;

  // Training or evaluation mode (dropout, norms).
  virtual void set_training(bool training) = 0;
};

}  // namespace baton
