#include "optimizer_state.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <c10/util/string_utils.h>

#include <memory>

#include "baton/error.h"
#include "host_copy.h"

namespace baton_app {
namespace {

// How torch::optim finds a parameter's state.
std::string state_key(const at::Tensor& param) {
  return c10::guts::to_string(param.unsafeGetTensorImpl());
}

void put(c10::Dict<std::string, at::Tensor>* out, const std::string& name, const char* field,
         const at::Tensor& value) {
  if (value.defined()) out->insert("optim." + name + "." + field, host_copy(value));
}

// Adam's and AdamW's states have the same fields in two classes (torch::optim looks a state
// up by its own type).
template <typename AdamState>
bool put_adam_state(const torch::optim::OptimizerParamState& state, const std::string& name,
                    c10::Dict<std::string, at::Tensor>* out) {
  const auto* adam = dynamic_cast<const AdamState*>(&state);
  if (adam == nullptr) return false;
  put(out, name, "step", at::scalar_tensor(adam->step(), at::kLong));
  put(out, name, "exp_avg", adam->exp_avg());
  put(out, name, "exp_avg_sq", adam->exp_avg_sq());
  put(out, name, "max_exp_avg_sq", adam->max_exp_avg_sq());
  return true;
}

template <typename AdamState>
std::unique_ptr<torch::optim::OptimizerParamState> adam_state(std::int64_t step,
                                                              const at::Tensor& exp_avg,
                                                              const at::Tensor& exp_avg_sq,
                                                              const at::Tensor& max_exp_avg_sq) {
  auto state = std::make_unique<AdamState>();
  state->step(step);
  state->exp_avg(exp_avg);
  state->exp_avg_sq(exp_avg_sq);
  state->max_exp_avg_sq(max_exp_avg_sq);
  return state;
}

}  // namespace

void add_optimizer_state_by_name(const torch::optim::Optimizer& optimizer,
                                 const NamedParameters& named,
                                 c10::Dict<std::string, at::Tensor>* out) {
  const auto& states = optimizer.state();
  for (const auto& [name, param] : named) {
    const auto found = states.find(state_key(param));
    if (found == states.end()) continue;
    const torch::optim::OptimizerParamState& state = *found->second;
    if (put_adam_state<torch::optim::AdamParamState>(state, name, out) ||
        put_adam_state<torch::optim::AdamWParamState>(state, name, out)) {
      continue;
    }
    if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(&state)) {
      put(out, name, "momentum_buffer", sgd->momentum_buffer());
    }
  }
}

void restore_optimizer_state_by_name(torch::optim::Optimizer& optimizer,
                                     const std::string& optimizer_name,
                                     const NamedParameters& named, const CheckpointLookup& lookup,
                                     const std::string& where) {
  auto& states = optimizer.state();
  for (const auto& [name, param] : named) {
    const auto field = [&](const char* suffix, bool same_shape) {
      const at::Tensor value = lookup("optim." + name + "." + suffix);
      if (value.defined() && same_shape && !value.sizes().equals(param.sizes())) {
        throw baton::ConfigError("--resume: the " + optimizer_name + " state '" + suffix +
                                 "' of parameter '" + name + "' in '" + where +
                                 "' has another shape than the parameter");
      }
      // Onto the parameter's device (world.device), a copy either way.
      return value.defined() ? value.to(param.device(), /*non_blocking=*/false, /*copy=*/true)
                             : value;
    };
    std::unique_ptr<torch::optim::OptimizerParamState> state;
    if (optimizer_name == "adam" || optimizer_name == "adamw") {
      const at::Tensor step = field("step", false);
      const at::Tensor exp_avg = field("exp_avg", true);
      if (!step.defined() || !exp_avg.defined()) continue;  // never stepped
      const at::Tensor exp_avg_sq = field("exp_avg_sq", true);
      if (!exp_avg_sq.defined()) {
        throw baton::ConfigError("--resume: parameter '" + name + "' in '" + where +
                                 "' has Adam's exp_avg but no exp_avg_sq (damaged checkpoint)");
      }
      const at::Tensor max_exp_avg_sq = field("max_exp_avg_sq", true);
      state = optimizer_name == "adam"
                  ? adam_state<torch::optim::AdamParamState>(step.item<std::int64_t>(), exp_avg,
                                                             exp_avg_sq, max_exp_avg_sq)
                  : adam_state<torch::optim::AdamWParamState>(step.item<std::int64_t>(), exp_avg,
                                                              exp_avg_sq, max_exp_avg_sq);
    } else if (optimizer_name == "sgd") {
      const at::Tensor buffer = field("momentum_buffer", true);
      if (!buffer.defined()) continue;  // no momentum, or never stepped
      auto sgd = std::make_unique<torch::optim::SGDParamState>();
      sgd->momentum_buffer(buffer);
      state = std::move(sgd);
    } else {
      throw baton::ConfigError(
          "--resume onto another layout knows the state of sgd, adam and adamw, "
          "not of '" +
          optimizer_name + "'");
    }
    states[state_key(param)] = std::move(state);
  }
}

}  // namespace baton_app
