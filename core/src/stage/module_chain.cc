#include "baton/module_chain.h"

#include "baton/error.h"

namespace baton {

ModuleChain::ModuleChain(std::shared_ptr<torch::nn::Module> root, std::vector<ModuleUnit> units)
    : root_(std::move(root)), units_(std::move(units)) {
  if (units_.empty()) throw Error("a model needs at least one unit");
  for (const auto& unit : units_) {
    if (unit.module.is_empty()) throw Error("unit '" + unit.name + "' has no module");
    // A unit's parameters must be the root's under the unit's name, or checkpoints would not
    // map onto the full model.
    const auto unit_params = unit.module.ptr()->named_parameters(/*recurse=*/true);
    const auto root_params = root_->named_parameters(/*recurse=*/true);
    for (const auto& param : unit_params) {
      const std::string full = unit.name + "." + param.key();
      const at::Tensor* found = root_params.find(full);
      if (found == nullptr || !found->is_same(param.value())) {
        throw Error("unit '" + unit.name + "' parameter '" + param.key() +
                    "' is not the root module's '" + full +
                    "': register the unit under that name in the root module");
      }
    }
  }
}

std::string ModuleChain::unit_name(int unit) const {
  return units_.at(static_cast<std::size_t>(unit)).name;
}

std::vector<at::Tensor> ModuleChain::run_unit(int unit, const std::vector<at::Tensor>& inputs) {
  auto& module = units_.at(static_cast<std::size_t>(unit)).module;
  if (inputs.size() != 1) {
    throw Error("unit '" + units_[static_cast<std::size_t>(unit)].name +
                "' takes one tensor, got " + std::to_string(inputs.size()));
  }
  return {module.forward<at::Tensor>(inputs[0])};
}

std::vector<std::pair<std::string, at::Tensor>> ModuleChain::unit_parameters(int unit) const {
  const auto& entry = units_.at(static_cast<std::size_t>(unit));
  std::vector<std::pair<std::string, at::Tensor>> params;
  for (const auto& param : entry.module.ptr()->named_parameters(/*recurse=*/true)) {
    params.emplace_back(entry.name + "." + param.key(), param.value());
  }
  return params;
}

void ModuleChain::move_unit(int unit, c10::Device device) {
  units_.at(static_cast<std::size_t>(unit)).module.ptr()->to(device);
}

void ModuleChain::set_training(bool training) {
  root_->train(training);
}

}  // namespace baton
