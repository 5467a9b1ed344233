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
#include "baton/unit_chain.h"

namespace baton_models {

struct BuiltModel {
  std::shared_ptr<baton::UnitChain> chain;
  baton::LossFunction loss;
  // What one batch looks like, for synthetic data: input shape and dtype (batch dim first)
  // and targets (class indices in [0, num_classes)).
  std::vector<std::int64_t> sample_shape;  // without the batch dimension
  at::ScalarType input_dtype = at::kFloat;
  std::int64_t input_range = 0;  // for integer inputs (tokens): values in [0, input_range)
  std::vector<std::int64_t> target_shape;  // without the batch dimension
  std::int64_t num_classes = 0;
  // Losses other than cross entropy (model.loss) compare the output with values: synthetic
  // targets are then floats of `value_target_shape` (one sample's output), and targets read
  // from files keep their dtype.
  bool value_targets = false;
  std::vector<std::int64_t> value_target_shape;
  // Optional check on a real batch, once the pipeline is set up (a TorchScript model's
  // forward must be the chain of its children); throws ConfigError.
  std::function<void(const std::vector<at::Tensor>& inputs)> verify;
};

// `params` were checked against the model's table (see model_catalog.h). Parameters are
// initialised from `seed`, identically on every rank.
BuiltModel build_mlp(const baton::ParamValues& params, std::uint64_t seed);
BuiltModel build_gpt(const baton::ParamValues& params, std::uint64_t seed);
BuiltModel build_identity(const baton::ParamValues& params, std::uint64_t seed);
// `path`: model.path; parameters come from the file, not from a seed.
BuiltModel build_torchscript(const baton::ParamValue& path, const baton::ParamValues& params);

// Cross entropy of logits [..., classes] against class indices [...].
at::Tensor cross_entropy_loss(const std::vector<at::Tensor>& outputs, const at::Tensor& targets);

}  // namespace baton_models
