#include "losses.h"

#include <torch/script.h>

#include <unistd.h>

#include <memory>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/stage_files_chain.h"
#include "model_loss_chain.h"
#include "output_probe.h"

namespace baton_models {
namespace {

baton::LossFunction scripted_loss(const baton::Setting<std::string>& setting) {
  const std::string& path = setting.value;
  auto module = std::make_shared<torch::jit::Module>();
  try {
    baton::require_readable_file(path, "model.loss");
  } catch (const baton::Error& error) {
    throw baton::ConfigError(setting.where() + ": " + error.what());
  }
  try {
    *module = torch::jit::load(path);
  } catch (const std::exception& error) {
    std::string first_line = error.what();
    first_line = first_line.substr(0, first_line.find('\n'));
    throw baton::ConfigError(setting.where() + ": model.loss: cannot load '" + path +
                             "' as a TorchScript module (save one with "
                             "torch.jit.save(torch.jit.script(loss), path)): " +
                             first_line);
  }
  if (!module->find_method("forward")) {
    throw baton::ConfigError(setting.where() + ": model.loss: '" + path +
                             "' has no forward(output, target) method");
  }
  module->eval();
  return [module, path](const std::vector<at::Tensor>& outputs, const at::Tensor& targets) {
    const c10::IValue value = module->forward({outputs.at(0), targets});
    if (!value.isTensor() || value.toTensor().numel() != 1) {
      throw baton::Error("model.loss '" + path +
                         "': forward(output, target) must return a tensor with one element");
    }
    return value.toTensor().reshape({});
  };
}

}  // namespace

void check_loss_has_gradient(const BuiltModel& model, const at::Tensor& targets,
                             const baton::Setting<std::string>& setting) {
  // The model's own loss takes the last stage's inputs, not an output: baton-split checked it
  // on the example, and the first step's backward goes through it.
  if (model.loss_from_model) return;
  std::vector<std::int64_t> shape{1};
  if (model.value_targets) {
    shape.insert(shape.end(), model.value_target_shape.begin(), model.value_target_shape.end());
  } else {
    shape.insert(shape.end(), model.target_shape.begin(), model.target_shape.end());
    shape.push_back(model.num_classes);
  }
  const at::Tensor output = at::zeros(shape).requires_grad_(true);
  at::Tensor loss;
  const at::Tensor sample = targets.slice(0, 0, 1);
  try {
    loss = model.loss({output}, sample);
  } catch (const std::exception& error) {
    std::string what = error.what();
    what = what.substr(0, what.find('\n'));
    throw baton::ConfigError(
        setting.where() + ": model.loss '" + setting.value + "' fails on the model's output " +
        describe_tensors({output}) + " and the targets " + describe_tensors({sample}) +
        (model.value_targets ? " (values)" : " (class ids)") + ": " + what +
        (model.value_targets ? "; a loss over class ids gets them with model.targets: classes "
                               "(or integer data.targets)"
                             : "; a loss over values gets them with model.targets: values"));
  }
  if (!loss.requires_grad()) {
    throw baton::ConfigError(setting.where() + ": model.loss '" + setting.value +
                             "' returns a value with no gradient with respect to the model's "
                             "output (a constant, or computed under no_grad/detach): training "
                             "would change nothing");
  }
}

at::Tensor summed_squared_error(const std::vector<at::Tensor>& outputs, const at::Tensor& targets) {
  const at::Tensor& output = outputs.at(0);
  return at::mse_loss(output, targets.to(output.scalar_type()).reshape(output.sizes()),
                      at::Reduction::Sum);
}

void apply_configured_loss(const ModelSettings& settings, BuiltModel* model) {
  const baton::Setting<std::string>& setting = settings.loss;
  const std::string& name = setting.value;
  model->count_targets = nullptr;
  if (name != "from_model" && model->chain) {
    if (const auto own = baton::model_loss_of(*model->chain)) {
      throw baton::ConfigError(
          setting.where() + ": model.loss is '" + name + "', but the last stage file '" +
          own->file +
          "' returns the model's own loss (baton-split traced its forward with targets), not "
          "an output to take a loss of: set model.loss: from_model (baton-split's model.yaml "
          "says so), or split again without targets to train on the logits");
    }
  }
  if (name == "from_model") {
    use_the_models_own_loss(model, setting, settings.ignore_index);
    return;
  }
  if (name == "cross_entropy") {
    const std::int64_t ignored = settings.ignore_index.value;
    const double smoothing = settings.label_smoothing.value;
    model->ignore_index = ignored;
    model->loss = [ignored, smoothing](const std::vector<at::Tensor>& outputs,
                                       const at::Tensor& targets) {
      const at::Tensor& logits = outputs.at(0);
      return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}),
                                    {}, at::Reduction::Sum, ignored, smoothing);
    };
    model->count_targets = [ignored](const at::Tensor& targets) {
      return targets.ne(ignored).sum().item<std::int64_t>();
    };
    model->value_targets = false;
    return;
  }
  if (name == "mse") {
    model->loss = summed_squared_error;
    model->count_targets = [](const at::Tensor& targets) { return targets.numel(); };
  } else if (::access(name.c_str(), F_OK) == 0) {
    model->loss = scripted_loss(setting);
    // A scripted loss takes class ids or values, as model.targets says or the data holds.
    const TargetKind kind = settings.targets.value;
    model->ignore_index = settings.ignore_index.value;
    model->targets_follow_data = kind == TargetKind::kFollowData;
    model->value_targets = kind != TargetKind::kClasses;
    return;
  } else {
    throw baton::ConfigError(
        setting.where() + ": model.loss: '" + name +
        "' is neither cross_entropy, mse, nor a TorchScript file that exists (a path to a "
        ".pt module whose forward(output, target) returns the loss)");
  }
  // The output's shape is learned from a sample of the data (output_probe.h).
  model->value_targets = true;
}

}  // namespace baton_models
