// MLP: "input" (Linear + ReLU), "layers.<i>" (Linear + ReLU), "head" (Linear, optional):
// a model whose every unit is one pipeline cut point.
#include <torch/torch.h>

#include "baton/module_chain.h"
#include "linear.h"
#include "models.h"

namespace baton_models {
namespace {

struct DenseReluImpl : torch::nn::Module {
  DenseReluImpl(std::int64_t in, std::int64_t out) : fc(register_module("fc", Linear(in, out))) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(fc(x)); }
  Linear fc;
};
TORCH_MODULE(DenseRelu);

}  // namespace

BuiltModel build_mlp(const baton::ParamValues& params, std::uint64_t seed) {
  torch::manual_seed(seed);
  const std::int64_t in = params.get_int("in_features");
  const std::int64_t hidden = params.get_int("hidden");
  const std::int64_t layers = params.get_int("layers");
  const std::int64_t out = params.get_int("out_features");
  auto root = std::make_shared<torch::nn::Module>("Mlp");
  std::vector<baton::ModuleUnit> units;
  DenseRelu input(in, hidden);
  root->register_module("input", input);
  units.push_back({"input", torch::nn::AnyModule(input)});
  auto list = root->register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < layers; ++i) {
    DenseRelu layer(hidden, hidden);
    list->push_back(layer);
    units.push_back({"layers." + std::to_string(i), torch::nn::AnyModule(layer)});
  }
  if (params.get_bool("head")) {
    Linear head(hidden, out);
    root->register_module("head", head);
    units.push_back({"head", torch::nn::AnyModule(head)});
  }

  BuiltModel model;
  model.chain = std::make_shared<baton::ModuleChain>(root, std::move(units));
  model.loss = cross_entropy_loss;
  model.inputs = {{{in}, at::kFloat, 0}};
  model.output_known = true;
  model.target_shape = {};
  model.num_classes = params.get_bool("head") ? out : hidden;
  return model;
}

at::Tensor cross_entropy_loss(const std::vector<at::Tensor>& outputs, const at::Tensor& targets) {
  const at::Tensor& logits = outputs.at(0);
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                              targets.reshape({-1}));
}

}  // namespace baton_models
