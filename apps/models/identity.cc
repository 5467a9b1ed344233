// Identity: `units` units that each multiply their input by a learnable scalar (1 at
// start), so stages return their input. The model of the per-action overhead benchmark:
// its compute is next to nothing, so a step's time is the runtime's own.
#include <torch/torch.h>

#include "baton/module_chain.h"
#include "models.h"

namespace baton_models {
namespace {

struct ScaleImpl : torch::nn::Module {
  ScaleImpl() : weight(register_parameter("weight", torch::ones({1}))) {}
  torch::Tensor forward(const torch::Tensor& x) { return x * weight; }
  torch::Tensor weight;
};
TORCH_MODULE(Scale);

}  // namespace

BuiltModel build_identity(const baton::ParamValues& params, std::uint64_t seed) {
  torch::manual_seed(seed);
  const std::int64_t width = params.get_int("width");
  const std::int64_t count = params.get_int("units");
  auto root = std::make_shared<torch::nn::Module>("Identity");
  auto list = root->register_module("units", torch::nn::ModuleList());
  std::vector<baton::ModuleUnit> units;
  for (std::int64_t i = 0; i < count; ++i) {
    Scale unit;
    list->push_back(unit);
    units.push_back({"units." + std::to_string(i), torch::nn::AnyModule(unit)});
  }
  BuiltModel model;
  model.chain = std::make_shared<baton::ModuleChain>(root, std::move(units));
  model.loss = cross_entropy_loss;
  model.inputs = {{{width}, at::kFloat, 0}};
  model.output_known = true;
  model.target_shape = {};
  model.num_classes = width;
  return model;
}

}  // namespace baton_models
