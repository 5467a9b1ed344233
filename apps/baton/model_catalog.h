// The built-in models the `baton` program can build, with their parameter tables
// (checked against model.params in the YAML).
#pragma once

#include <string>
#include <vector>

#include "baton/params.h"

namespace baton_app {

struct ModelEntry {
  const char* name;
  const char* doc;
  const baton::ParamSpec* params;
  std::size_t num_params;
};

const std::vector<ModelEntry>& model_catalog();

// Throws baton::ConfigError naming model.name's origin and the known models.
const ModelEntry& find_model(const baton::ParamValue& model_name);

}  // namespace baton_app
