// Small models for runtime tests, built as ModuleChains: a root module that owns every
// parameter under the names an unpipelined model would use, and its units in order.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "baton/module_chain.h"

namespace baton_test {

// Linear followed by tanh: one pipeline unit.
struct DenseBlockImpl : torch::nn::Module {
  DenseBlockImpl(int64_t in, int64_t out) : fc(register_module("fc", torch::nn::Linear(in, out))) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::tanh(fc(x)); }
  torch::nn::Linear fc;
};
TORCH_MODULE(DenseBlock);

// "layers.0" … "layers.<depth-1>" (width → width), then "head" (width → outputs).
inline std::shared_ptr<baton::ModuleChain> make_mlp_chain(int depth, int64_t width, int64_t outputs,
                                                          uint64_t seed) {
  torch::manual_seed(seed);
  auto root = std::make_shared<torch::nn::Module>("TestMlp");
  auto layers = root->register_module("layers", torch::nn::ModuleList());
  std::vector<baton::ModuleUnit> units;
  for (int i = 0; i < depth; ++i) {
    DenseBlock block(width, width);
    layers->push_back(block);
    units.push_back({"layers." + std::to_string(i), torch::nn::AnyModule(block)});
  }
  torch::nn::Linear head(width, outputs);
  root->register_module("head", head);
  units.push_back({"head", torch::nn::AnyModule(head)});
  return std::make_shared<baton::ModuleChain>(root, std::move(units));
}

// make_mlp_chain's model written out from its parameters, without baton's chain code: the
// reference the runtime tests compare stages and executors with.
inline torch::Tensor mlp_chain_by_hand(torch::nn::Module& root, int depth, torch::Tensor x) {
  auto params = root.named_parameters();
  for (int i = 0; i < depth; ++i) {
    const std::string layer = "layers." + std::to_string(i) + ".fc.";
    x = torch::tanh(
        torch::nn::functional::linear(x, params[layer + "weight"], params[layer + "bias"]));
  }
  return torch::nn::functional::linear(x, params["head.weight"], params["head.bias"]);
}

inline torch::Tensor mse_loss(const std::vector<torch::Tensor>& outputs,
                              const torch::Tensor& targets) {
  return torch::mse_loss(outputs.at(0), targets);
}

}  // namespace baton_test
