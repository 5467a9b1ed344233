// The loss a run trains with (model.loss): cross entropy against class indices, mean squared
// error against float values shaped like the output, a TorchScript module saved from
// Python whose forward(output, target) returns the loss, or the model's own (from_model:
// stage files whose last stage returns it, model_loss_chain.h).
//
// The built-in two are token means, as PyTorch computes them on the whole batch: a
// microbatch's loss is the SUM over the targets it counts, and BuiltModel::count_targets
// says how many (cross entropy: those not equal to model.ignore_index; mse: every element),
// so the executor divides by the count of the whole global batch (ExecutorOptions::
// count_targets). A scripted loss returns a mean: the microbatches' means are averaged.
#pragma once

#include "baton/params.h"
#include "model_settings.h"
#include "models.h"

namespace baton_models {

// Sets model->loss and whether its targets are values (model->value_targets; their shape is
// learned from a sample of the data: output_probe.h). Throws ConfigError
// naming model.loss's origin for an unknown name or a file that is not a loss module.
void apply_configured_loss(const ModelSettings& settings, BuiltModel* model);

// Throws ConfigError when the loss, applied to an output that requires a gradient and to
// `targets` (a batch of them: the first row is used), returns a value without one: a scripted
// loss returning a constant would train nothing.
void check_loss_has_gradient(const BuiltModel& model, const at::Tensor& targets,
                             const baton::Setting<std::string>& setting);

// The sum of squared errors between the first output and the targets (cast to its dtype).
at::Tensor summed_squared_error(const std::vector<at::Tensor>& outputs, const at::Tensor& targets);

}  // namespace baton_models
