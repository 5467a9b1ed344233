// The optimizer a run trains with, made from its typed settings (optimizer_settings.h):
// torch::optim's SGD, Adam or AdamW over this rank's parameters, in the parameter groups
// optimizer.decay asks for, plus the learning rate each step sets.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "optimizer_settings.h"

namespace torch {
namespace optim {
class Optimizer;
}
}  // namespace torch

namespace baton_app {

// decay all: one group. decay matrices: parameters of 2 or more dimensions take
// weight_decay, the others (biases, norms) none — two groups, as nanoGPT makes them; a group
// with no parameter on this rank is left out. The same update as torch.optim's class with
// those groups, parameter by parameter.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSettings& settings,
                                                        const std::vector<at::Tensor>& params);

// Every group's learning rate, before the step's update.
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace baton_app
