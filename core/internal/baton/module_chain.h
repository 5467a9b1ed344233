// A UnitChain over a C++ torch::nn::Module: the root module owns every parameter (so names
// come from root->named_parameters()), and the units are given in order as AnyModules.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>

#include <memory>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/unit_chain.h"

namespace baton {

struct ModuleUnit {
  std::string name;  // the unit's path in the root: "layers.3"
  torch::nn::AnyModule module;
};

class BATON_API ModuleChain : public UnitChain {
 public:
  // Throws baton::Error when a unit's parameters are not found under its name in `root`.
  ModuleChain(std::shared_ptr<torch::nn::Module> root, std::vector<ModuleUnit> units);

  int num_units() const override { return static_cast<int>(units_.size()); }
  std::string unit_name(int unit) const override;
  std::vector<at::Tensor> run_unit(int unit, const std::vector<at::Tensor>& inputs) override;
  std::vector<std::pair<std::string, at::Tensor>> unit_parameters(int unit) const override;
  // Every parameter and buffer of the unit's module, persistent or not.
  void move_unit(int unit, c10::Device device) override;
  void set_training(bool training) override;

  const std::shared_ptr<torch::nn::Module>& root() const { return root_; }

 private:
  std::shared_ptr<torch::nn::Module> root_;
  std::vector<ModuleUnit> units_;
};

}  // namespace baton
