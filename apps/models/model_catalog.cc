#include "model_catalog.h"

#include "baton/error.h"
#include "losses.h"

namespace baton_models {
namespace {

// Model name -> builder (null: loaded from model.path). Names and parameters are in
// model_specs.cc.
struct Builder {
  const char* name;
  BuiltModel (*build)(const baton::ParamValues& params, std::uint64_t seed);
};

const Builder kBuilders[] = {
    {"mlp", &build_mlp},
    {"gpt", &build_gpt},
    {"identity", &build_identity},
    {"torchscript", nullptr},
};

}  // namespace

BuiltModel build_configured_model(baton::Config& config, std::uint64_t seed) {
  const ModelSpec& spec = resolve_model_params(config);
  const baton::ParamValues& params = config.plugin_params("model");
  BuiltModel model;
  bool found = false;
  for (const Builder& builder : kBuilders) {
    if (std::string(builder.name) != spec.name) continue;
    found = true;
    model = builder.build == nullptr ? build_torchscript(config.section("model").at("path"), params)
                                     : builder.build(params, seed);
  }
  if (!found) throw baton::Error(std::string("model '") + spec.name + "' has no builder");
  apply_configured_loss(config.section("model").at("loss"), &model);
  return model;
}

}  // namespace baton_models
