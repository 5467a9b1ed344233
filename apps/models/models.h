// The built-in models: an MLP and a small GPT-style decoder, each built as a UnitChain whose
// parameter names are the same pipelined or not, plus the loss and the shape of a sample.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/params.h"
#include "baton/runtime/executor.h"
#include "baton/setting.h"
#include "baton/unit_chain.h"

namespace baton_models {

// One positional argument of the first stage's forward: what synthetic data draws and what a
// sample of real data is checked against.
struct InputSpec {
  std::vector<std::int64_t> shape;  // one sample, without the batch dimension
  at::ScalarType dtype = at::kFloat;
  std::int64_t high = 0;  // integer inputs: synthetic values in [0, high); 0: the output width
};

struct BuiltModel {
  std::shared_ptr<baton::UnitChain> chain;
  baton::LossFunction loss;
  // Set for the built-in losses, which then return a microbatch's SUM (losses.h); null for a
  // scripted loss, which returns a mean.
  baton::TargetCount count_targets;
  // model.loss: from_model: the last stage file computes the loss itself
  // (model_loss_chain.h); set by use_the_models_own_loss.
  bool loss_from_model = false;
  // cross_entropy: targets equal to it are padding, not class ids (model.ignore_index).
  std::int64_t ignore_index = -100;
  // The first stage's arguments, in order. A user's model (TorchScript) takes the data in
  // the dtype it has (`keeps_data_dtype`); a built-in one converts it to its own.
  std::vector<InputSpec> inputs;
  bool keeps_data_dtype = false;
  // Cross-entropy targets: class ids shaped like the output without its last dimension
  // (`target_shape`, without the batch dimension), in [0, num_classes). A built-in model
  // knows them (`output_known`); a user's model's are learned from a real sample of the
  // data (learn_output_from_sample, output_probe.h).
  bool output_known = false;
  std::vector<std::int64_t> target_shape;
  std::int64_t num_classes = 0;
  // Losses other than cross entropy (model.loss) compare the output with values: synthetic
  // targets are then floats of `value_target_shape` (one sample's output), and targets read
  // from files keep their dtype.
  bool value_targets = false;
  std::vector<std::int64_t> value_target_shape;
  // A scripted loss with model.targets: auto takes what the data holds: integer targets
  // (files of integers, a text's next tokens) as class ids, float ones as values (decided by
  // file_batches and text_batches, batches.cc); synthetic data draws values.
  bool targets_follow_data = false;
  // Optional check on a real batch, once the pipeline is set up (a TorchScript model's
  // forward must be the chain of its children); throws ConfigError.
  std::function<void(const std::vector<at::Tensor>& inputs)> verify;
  // model.stages: one unit per stage file, cut exactly there (never by model.cuts).
  bool stage_files = false;
  // Where the model came from, for messages: "model 'torchscript' (model.pt)".
  std::string description;
};

// `params` were checked against the model's table (see model_catalog.h). Parameters are
// initialised from `seed`, identically on every rank.
BuiltModel build_mlp(const baton::ParamValues& params, std::uint64_t seed);
BuiltModel build_gpt(const baton::ParamValues& params, std::uint64_t seed);
BuiltModel build_identity(const baton::ParamValues& params, std::uint64_t seed);
// `path`: model.path, or `stage_files`: model.stages (one file per stage); parameters come
// from the files, not from a seed.
BuiltModel build_torchscript(const baton::Setting<std::string>& path,
                             const baton::Setting<std::vector<std::string>>& stage_files,
                             const baton::ParamValues& params);

// Cross entropy of logits [..., classes] against class indices [...].
at::Tensor cross_entropy_loss(const std::vector<at::Tensor>& outputs, const at::Tensor& targets);

}  // namespace baton_models
