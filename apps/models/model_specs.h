// What the built-in models accept: name, doc, parameter table and the checks on values that
// no table can express (heads must divide d_model). No LibTorch: `baton config check` reads
// these without building a model; model_catalog.h builds one.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/params.h"
#include "baton/setting.h"

namespace baton_models {

struct ModelSpec {
  const char* name;
  const char* doc;
  const baton::ParamSpec* params;
  std::size_t num_params;
  // Refuses values the model cannot be built with (throws baton::ConfigError naming the key
  // and where its value came from). May be null.
  void (*check)(const baton::ParamValues& params);
};

const std::vector<ModelSpec>& model_specs();

// Throws baton::ConfigError naming model.name's origin and the known models.
const ModelSpec& find_model_spec(const baton::Setting<std::string>& model_name);

// `config` with model.params checked against the configured model's table and its own
// checks, the resolved values in config.plugin_params("model"), where `baton config` and the
// run header show them. Called at a run's front door (training/resolved_config.h) and by
// `config check`.
baton::Config with_model_params(baton::Config config);

}  // namespace baton_models
