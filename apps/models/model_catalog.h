// The built-in models, with their parameter tables (checked against model.params in the
// YAML) and builders.
#pragma once

#include <string>
#include <vector>

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

}  // namespace baton_models
