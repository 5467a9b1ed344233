#include "model_settings.h"

#include "model_specs.h"

namespace baton_models {

ModelSettings read_model_settings(const baton::Config& config) {
  const baton::ParamValues& model = config.section("model");
  ModelSettings settings;
  settings.name = model.at("name");
  settings.path = model.at("path");
  settings.stages = model.at("stages");
  settings.loss = model.at("loss");
  settings.ignore_index = model.at("ignore_index");
  settings.label_smoothing = model.at("label_smoothing");
  settings.targets = model.at("targets");
  settings.params = config.plugin_params("model");
  return settings;
}

DataSettings read_data_settings(const baton::Config& config) {
  const baton::ParamValues& data = config.section("data");
  DataSettings settings;
  settings.source = data.at("source");
  settings.tokens = data.at("tokens");
  settings.token_format = data.at("token_format");
  settings.prefetch = data.at("prefetch");
  settings.inputs = data.at("inputs");
  settings.targets = data.at("targets");
  settings.batch_size = data.get_int("batch_size");
  settings.seed = static_cast<std::uint64_t>(config.section("run").get_int("seed"));
  return settings;
}

}  // namespace baton_models
