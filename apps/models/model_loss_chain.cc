#include "model_loss_chain.h"

#include <ATen/ATen.h>

#include "baton/error.h"

namespace baton_models {

ModelLossChain::ModelLossChain(std::shared_ptr<baton::UnitChain> files,
                               baton::ModelLossRecord record)
    : files_(std::move(files)), record_(std::move(record)), last_(files_->num_units() - 1) {}

int ModelLossChain::num_units() const {
  return files_->num_units();
}

std::string ModelLossChain::unit_name(int unit) const {
  return files_->unit_name(unit);
}

std::vector<at::Tensor> ModelLossChain::run_unit(int unit, const std::vector<at::Tensor>& inputs) {
  if (unit == last_) return inputs;  // loss() runs it, with the targets
  return files_->run_unit(unit, inputs);
}

std::vector<std::pair<std::string, at::Tensor>> ModelLossChain::unit_parameters(int unit) const {
  return files_->unit_parameters(unit);
}

std::vector<std::pair<std::string, at::Tensor>> ModelLossChain::unit_buffers(int unit) const {
  return files_->unit_buffers(unit);
}

void ModelLossChain::set_training(bool training) {
  files_->set_training(training);
}

void ModelLossChain::move_unit(int unit, c10::Device device) {
  files_->move_unit(unit, device);
}

at::Tensor ModelLossChain::counted(const at::Tensor& targets) const {
  return targets.ne(record_.ignore_index).sum();
}

std::int64_t ModelLossChain::count(const at::Tensor& targets) const {
  const std::int64_t number = counted(targets).item<std::int64_t>();
  if (number == 0) {
    throw baton::Error("a microbatch's targets are all model.ignore_index (" +
                       std::to_string(record_.ignore_index) +
                       "): the model's own loss is a mean over none of them (nan). Give every "
                       "microbatch a target to count, or train with model.loss: cross_entropy "
                       "on the logits (split without targets)");
  }
  return number;
}

at::Tensor ModelLossChain::loss(const std::vector<at::Tensor>& outputs, const at::Tensor& targets) {
  std::vector<at::Tensor> inputs = outputs;
  inputs.push_back(targets);
  const std::vector<at::Tensor> returned = files_->run_unit(last_, inputs);
  if (returned.size() != 1 || returned[0].numel() != 1) {
    throw baton::Error("stage file '" + record_.file +
                       "' records the model's own loss but returns " +
                       std::to_string(returned.size()) +
                       " tensors, not one loss of one element; write it again with baton-split");
  }
  // The count as a tensor, not read back: no wait for the device in every microbatch's
  // forward. count() refused a microbatch that counts none when the step began.
  return returned[0].reshape({}) * counted(targets);
}

void use_the_models_own_loss(BuiltModel* model, const baton::Setting<std::string>& setting,
                             const baton::Setting<std::int64_t>& ignore_index) {
  const auto record = model->chain ? baton::model_loss_of(*model->chain) : std::nullopt;
  if (!record) {
    throw baton::ConfigError(
        setting.where() +
        ": model.loss: from_model trains on the loss the model's forward returns, which needs "
        "stage files baton-split wrote from a forward given its targets (example_inputs() "
        "with them, or --targets-arg NAME); " +
        (model->stage_files ? "these files' last stage returns no loss"
                            : "this model is not such files") +
        ". Split again with targets, or name a loss (cross_entropy, mse, a scripted .pt)");
  }
  if (ignore_index.value != record->ignore_index) {
    throw baton::ConfigError(
        ignore_index.where() + ": model.ignore_index is " + std::to_string(ignore_index.value) +
        ", but the model's own loss ignores targets equal to " +
        std::to_string(record->ignore_index) + " (its cross_entropy, recorded in '" + record->file +
        "'), so baton would count the targets it averages over otherwise; set " +
        "model.ignore_index: " + std::to_string(record->ignore_index) +
        " (baton-split's model.yaml has it)");
  }
  auto chain = std::make_shared<ModelLossChain>(model->chain, *record);
  model->chain = chain;
  model->loss = [chain](const std::vector<at::Tensor>& outputs, const at::Tensor& targets) {
    return chain->loss(outputs, targets);
  };
  model->count_targets = [chain](const at::Tensor& targets) { return chain->count(targets); };
  model->ignore_index = record->ignore_index;
  model->loss_from_model = true;
  // Synthetic targets as the model was traced with: class ids below the logits' width, or
  // values (a float target) of the recorded shape.
  model->output_known = true;
  model->value_targets =
      record->target_dtype.rfind("float", 0) == 0 || record->target_dtype == "bfloat16";
  model->target_shape = record->target_shape;
  model->value_target_shape = record->target_shape;
  model->num_classes = record->classes > 0 ? record->classes : model->num_classes;
  model->description += ", its own loss";
}

}  // namespace baton_models
