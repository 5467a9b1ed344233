#include "model_catalog.h"

#include "baton/error.h"
#include "losses.h"
#include "model_specs.h"

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

BuiltModel build_model(const ModelSettings& settings, std::uint64_t seed) {
  const std::string& name = find_model_spec(settings.name).name;
  BuiltModel model;
  bool found = false;
  for (const Builder& builder : kBuilders) {
    if (builder.name != name) continue;
    found = true;
    model = builder.build == nullptr
                ? build_torchscript(settings.path, settings.stages, settings.params)
                : builder.build(settings.params, seed);
    if (model.description.empty()) model.description = "model '" + name + "'";
  }
  if (!found) throw baton::Error("model '" + name + "' has no builder");
  apply_configured_loss(settings, &model);
  return model;
}

}  // namespace baton_models
