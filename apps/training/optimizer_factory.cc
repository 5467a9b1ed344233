#include "optimizer_factory.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <tuple>
#include <utility>

#include "baton/error.h"

namespace baton_app {
namespace {

// Options of one group: the settings, with this group's weight decay.
std::unique_ptr<torch::optim::OptimizerOptions> options_for(const OptimizerSettings& settings,
                                                            double weight_decay) {
  if (settings.name == "sgd") {
    return std::make_unique<torch::optim::SGDOptions>(torch::optim::SGDOptions(settings.lr)
                                                          .momentum(settings.momentum)
                                                          .nesterov(settings.nesterov)
                                                          .weight_decay(weight_decay));
  }
  const auto betas = std::make_tuple(settings.beta1, settings.beta2);
  if (settings.name == "adam") {
    return std::make_unique<torch::optim::AdamOptions>(torch::optim::AdamOptions(settings.lr)
                                                           .betas(betas)
                                                           .eps(settings.eps)
                                                           .weight_decay(weight_decay));
  }
  if (settings.name == "adamw") {
    // Set explicitly: AdamWOptions' own default is 0.01, torch.optim.AdamW's too.
    return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(settings.lr)
                                                            .betas(betas)
                                                            .eps(settings.eps)
                                                            .weight_decay(weight_decay));
  }
  throw baton::ConfigError("optimizer.name must be sgd, adam or adamw, got '" + settings.name +
                           "'");
}

template <typename OptimizerType, typename OptionsType>
std::unique_ptr<torch::optim::Optimizer> make(std::vector<torch::optim::OptimizerParamGroup> groups,
                                              const torch::optim::OptimizerOptions& defaults) {
  return std::make_unique<OptimizerType>(std::move(groups),
                                         static_cast<const OptionsType&>(defaults));
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSettings& settings,
                                                        const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> decayed;
  std::vector<at::Tensor> undecayed;
  for (const at::Tensor& param : params) {
    const bool decays = settings.decay == DecayTarget::kAll || param.dim() >= 2;
    (decays ? decayed : undecayed).push_back(param);
  }
  std::vector<torch::optim::OptimizerParamGroup> groups;
  // A rank may hold no parameter of a kind; an optimizer with no group at all still needs one.
  if (!decayed.empty() || undecayed.empty()) {
    groups.emplace_back(decayed, options_for(settings, settings.weight_decay));
  }
  if (!undecayed.empty()) groups.emplace_back(undecayed, options_for(settings, 0.0));
  const auto defaults = options_for(settings, settings.weight_decay);
  if (settings.name == "sgd") {
    return make<torch::optim::SGD, torch::optim::SGDOptions>(std::move(groups), *defaults);
  }
  if (settings.name == "adam") {
    return make<torch::optim::Adam, torch::optim::AdamOptions>(std::move(groups), *defaults);
  }
  return make<torch::optim::AdamW, torch::optim::AdamWOptions>(std::move(groups), *defaults);
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace baton_app
