#include "output_probe.h"

#include <ATen/ATen.h>

#include "baton/error.h"
#include "baton/runtime/buffers_kept.h"
#include "baton/tensor_meta.h"
#include "baton/unit_chain.h"

namespace baton_models {
namespace {

// TorchScript errors carry the script's frames; the last line says what went wrong.
std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return text;
  const std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start + 1));
}

}  // namespace

std::string shape_text(at::IntArrayRef sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

std::string describe_tensors(const std::vector<at::Tensor>& tensors) {
  std::string text = "(";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    text += (i ? ", " : "") + shape_text(tensors[i].sizes()) + " " +
            baton::dtype_name(tensors[i].scalar_type());
  }
  return text + ")";
}

void learn_output_from_sample(BuiltModel* model, const std::vector<at::Tensor>& sample,
                              const std::string& data) {
  // A built-in model knows its classes; value targets need the output's shape from anyone.
  if (model->loss_from_model || (model->output_known && !model->value_targets)) return;
  // Unit by unit, so a model whose pieces do not fit together is refused naming both.
  std::vector<at::Tensor> values = sample;
  at::NoGradGuard no_grad;
  baton::UnitChain& chain = *model->chain;
  const baton::BuffersKept kept(baton::all_buffers(chain));  // a probe trains no statistics
  for (int unit = 0; unit < chain.num_units(); ++unit) {
    try {
      values = chain.run_unit(unit, values);
    } catch (const std::exception& error) {
      const std::string what = last_line(error.what());
      if (unit == 0) {
        throw baton::ConfigError(model->description + ": '" + chain.unit_name(0) +
                                 "' cannot take a sample of " + data + " " +
                                 describe_tensors(values) + ": " + what +
                                 "; the inputs reach the model's forward as positional "
                                 "arguments, in this order, with the dtype the data has");
      }
      throw baton::ConfigError(model->description + ": '" + chain.unit_name(unit) +
                               "' cannot take the outputs of '" + chain.unit_name(unit - 1) + "' " +
                               describe_tensors(values) + " (on a sample of " + data +
                               "): " + what);
    }
  }
  if (values.empty() || !values[0].defined()) {
    throw baton::ConfigError(model->description + " returned no tensor on a sample of " + data);
  }
  const at::Tensor output = values[0];
  if (model->value_targets) {
    model->value_target_shape.assign(output.sizes().begin() + 1, output.sizes().end());
    return;
  }
  if (output.dim() < 2 || !at::isFloatingType(output.scalar_type())) {
    throw baton::ConfigError(
        model->description + ": its output on a sample of " + data + " is " +
        describe_tensors({output}) +
        "; cross entropy needs float scores [batch, ..., classes] (use model.loss: mse or a "
        "scripted loss for another output)");
  }
  const std::int64_t width = output.size(-1);
  if (model->num_classes > width) {
    throw baton::ConfigError(model->description + ": model.params.num_classes is " +
                             std::to_string(model->num_classes) + " but the model's output has " +
                             std::to_string(width) + " scores per position; set num_classes ≤ " +
                             std::to_string(width) + " (0: the output width)");
  }
  if (model->num_classes <= 0) model->num_classes = width;
  model->target_shape.assign(output.sizes().begin() + 1, output.sizes().end() - 1);
}

}  // namespace baton_models
