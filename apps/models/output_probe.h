// What a model's output is, learned from a real sample of the data (never from a zero tensor
// of a guessed dtype): the classes and target shape of cross entropy for a user's model, the
// output shape that value targets (mse, a scripted loss) must have.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "models.h"

namespace baton_models {

// Runs the whole model once, without autograd, on `sample` (one row of every input) and fills
// in model->target_shape and model->num_classes (cross entropy, unless the builder knew them)
// or model->value_target_shape. `data` names where the sample came from, for the error when
// the model cannot take it.
void learn_output_from_sample(BuiltModel* model, const std::vector<at::Tensor>& sample,
                              const std::string& data);

// "[1, 32]": a shape, for messages.
std::string shape_text(at::IntArrayRef sizes);

// "([1, 32] int64, [1, 32] bool)": shapes and dtypes, for messages.
std::string describe_tensors(const std::vector<at::Tensor>& tensors);

}  // namespace baton_models
