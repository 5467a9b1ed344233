#include "baton/torchscript_chain.h"

#include <torch/script.h>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/runtime/buffers_kept.h"
#include "script_outputs.h"

namespace baton {
namespace {

bool is_container(const torch::jit::Module& module) {
  const std::string type = module.type()->name() ? module.type()->name()->name() : "";
  // ModuleList has no forward; Sequential's forward is just the chain of its items.
  return !module.find_method("forward") || type == "Sequential" || type == "ModuleList";
}

class TorchScriptChain : public UnitChain {
 public:
  explicit TorchScriptChain(torch::jit::Module root) : root_(std::move(root)) {
    for (const auto& child : root_.named_children()) add_unit(child.name, child.value);
    if (units_.empty()) {
      throw ConfigError(
          "the TorchScript model has no child modules to cut between; a "
          "pipelined model must be a chain of submodules");
    }
  }

  int num_units() const override { return static_cast<int>(units_.size()); }
  std::string unit_name(int unit) const override {
    return units_.at(static_cast<std::size_t>(unit)).first;
  }

  std::vector<at::Tensor> run_unit(int unit, const std::vector<at::Tensor>& inputs) override {
    auto& module = units_.at(static_cast<std::size_t>(unit)).second;
    std::vector<c10::IValue> args(inputs.begin(), inputs.end());
    return script_outputs_to_tensors(module.forward(args), unit_name(unit));
  }

  std::vector<std::pair<std::string, at::Tensor>> unit_parameters(int unit) const override {
    const auto& entry = units_.at(static_cast<std::size_t>(unit));
    std::vector<std::pair<std::string, at::Tensor>> params;
    for (const auto& param : entry.second.named_parameters(/*recurse=*/true)) {
      params.emplace_back(entry.first + "." + param.name, param.value);
    }
    return params;
  }

  void set_training(bool training) override { root_.train(training); }
  void move_unit(int unit, c10::Device device) override {
    units_.at(static_cast<std::size_t>(unit)).second.to(device);
  }

  torch::jit::Module& root() { return root_; }

 private:
  void add_unit(const std::string& name, const torch::jit::Module& module) {
    if (is_container(module)) {
      for (const auto& child : module.named_children())
        add_unit(name + "." + child.name, child.value);
      return;
    }
    units_.emplace_back(name, module);
  }

  torch::jit::Module root_;
  std::vector<std::pair<std::string, torch::jit::Module>> units_;
};

}  // namespace

std::shared_ptr<UnitChain> load_torchscript_chain(const std::string& path) {
  try {
    require_readable_file(path, "TorchScript model");
  } catch (const Error& error) {
    throw ConfigError(error.what());
  }
  try {
    return std::make_shared<TorchScriptChain>(torch::jit::load(path));
  } catch (const c10::Error& error) {
    throw ConfigError("cannot load TorchScript model '" + path +
                      "': " + error.what_without_backtrace() +
                      " (save it from Python with torch.jit.save(torch.jit.script(model), path))");
  }
}

void verify_torchscript_chain(UnitChain& chain, const std::vector<at::Tensor>& inputs) {
  auto* script = dynamic_cast<TorchScriptChain*>(&chain);
  if (script == nullptr) throw Error("verify_torchscript_chain needs a TorchScript chain");
  at::NoGradGuard no_grad;
  const BuffersKept kept(all_buffers(chain));  // two forwards: statistics left as they were
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  const auto whole = script_outputs_to_tensors(script->root().forward(args), "the model");
  const auto chained = run_whole_chain(chain, inputs);
  bool same = whole.size() == chained.size();
  for (std::size_t i = 0; same && i < whole.size(); ++i) {
    same = whole[i].sizes() == chained[i].sizes() && at::allclose(whole[i], chained[i], 1e-5, 1e-6);
  }
  if (!same) {
    std::string names;
    for (int u = 0; u < chain.num_units(); ++u) names += (u ? " -> " : "") + chain.unit_name(u);
    throw ConfigError("the TorchScript model's forward is not the chain of its children (" + names +
                      "): running them one after another gives a different result. Write the "
                      "model so forward() only calls its children in order (move residuals and "
                      "other glue inside child modules) so it can be cut into stages");
  }
}

}  // namespace baton
