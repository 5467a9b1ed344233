// Optimizer state by parameter name, so that a checkpoint can be restored onto another layout
// (other ranks, stages, cuts or replicas). torch::optim's own archive numbers a rank's
// parameters by their position in that rank's optimizer, which means nothing on another
// layout; this keeps each parameter's state under its full-model name instead:
// "optim.<name>.<field>" (Adam and AdamW: step, exp_avg, exp_avg_sq, max_exp_avg_sq; SGD:
// momentum_buffer), next to its "param.<name>".
#pragma once

#include <ATen/core/Dict.h>
#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace baton_app {

using NamedParameters = std::vector<std::pair<std::string, at::Tensor>>;

// Adds the state `optimizer` keeps for each of `named` (none yet for a parameter it never
// stepped) to `out`.
void add_optimizer_state_by_name(const torch::optim::Optimizer& optimizer,
                                 const NamedParameters& named,
                                 c10::Dict<std::string, at::Tensor>* out);

// A checkpoint entry by key ("optim.<name>.exp_avg"), or an undefined tensor when absent.
using CheckpointLookup = std::function<at::Tensor(const std::string& key)>;

// Gives each of `named` the state stored for its name, for optimizer `optimizer_name` (sgd,
// adam or adamw). Throws ConfigError naming the parameter when an entry has another shape than the
// parameter, and `where` (the checkpoint) in every message.
void restore_optimizer_state_by_name(torch::optim::Optimizer& optimizer,
                                     const std::string& optimizer_name,
                                     const NamedParameters& named, const CheckpointLookup& lookup,
                                     const std::string& where);

}  // namespace baton_app
