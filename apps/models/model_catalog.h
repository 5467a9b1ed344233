// The built-in models, with their parameter tables (checked against model.params in the
// YAML) and builders.
#pragma once

#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/params.h"
#include "models.h"

namespace baton_models {

struct ModelEntry {
  const char* name;
  const char* doc;
  const baton::ParamSpec* params;
  std::size_t num_params;
  // Builds the model from checked params; null for models loaded from a file.
  BuiltModel (*build)(const baton::ParamValues& params, std::uint64_t seed);
};

const std::vector<ModelEntry>& model_catalog();

// Throws baton::ConfigError naming model.name's origin and the known models.
const ModelEntry& find_model(const baton::ParamValue& model_name);

// Checks model.params against the model's table (recording the result in `config`) and
// builds the model: the one path `baton run` and the tests share.
BuiltModel build_configured_model(baton::Config& config, std::uint64_t seed);

}  // namespace baton_models
