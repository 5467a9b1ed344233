#include "model_settings.h"

#include "model_specs.h"

namespace baton_models {

namespace {

const std::vector<std::pair<const char*, DataSource>> kDataSources = {
    {"synthetic", DataSource::kSynthetic},
    {"files", DataSource::kFiles},
    {"text", DataSource::kText}};

}  // namespace

const char* data_source_name(DataSource source) {
  for (const auto& [name, value] : kDataSources) {
    if (value == source) return name;
  }
  return "?";
}

baton::Setting<TargetKind> read_target_kind(const baton::Config& config) {
  return baton::read_choice<TargetKind>(config.section("model"), "targets",
                                        {{"auto", TargetKind::kFollowData},
                                         {"classes", TargetKind::kClasses},
                                         {"values", TargetKind::kValues}});
}

ModelSettings read_model_settings(const baton::Config& config) {
  const baton::ParamValues& model = config.section("model");
  ModelSettings settings;
  settings.name = baton::read_setting<std::string>(model, "name");
  settings.path = baton::read_setting<std::string>(model, "path");
  settings.stages = baton::read_setting<std::vector<std::string>>(model, "stages");
  settings.loss = baton::read_setting<std::string>(model, "loss");
  settings.ignore_index = baton::read_setting<std::int64_t>(model, "ignore_index");
  settings.label_smoothing = baton::read_setting<double>(model, "label_smoothing");
  settings.targets = read_target_kind(config);
  settings.params = config.plugin_params("model");
  return settings;
}

DataSettings read_data_settings(const baton::Config& config) {
  const baton::ParamValues& data = config.section("data");
  DataSettings settings;
  settings.source = baton::read_choice(data, "source", kDataSources);
  settings.tokens = baton::read_setting<std::string>(data, "tokens");
  settings.token_format = baton::read_choice<TokenFormat>(data, "token_format",
                                                          {{"auto", TokenFormat::kBySuffix},
                                                           {"bytes", TokenFormat::kBytes},
                                                           {"uint16", TokenFormat::kUint16},
                                                           {"int32", TokenFormat::kInt32},
                                                           {"npy", TokenFormat::kNpy}});
  settings.prefetch = baton::read_choice<Prefetch>(data, "prefetch",
                                                   {{"auto", Prefetch::kWhereACpuIsFree},
                                                    {"true", Prefetch::kAlways},
                                                    {"false", Prefetch::kNever}});
  settings.inputs = baton::read_setting<std::vector<std::string>>(data, "inputs");
  settings.targets = baton::read_setting<std::string>(data, "targets");
  settings.batch_size = data.get_int("batch_size");
  settings.seed = static_cast<std::uint64_t>(config.section("run").get_int("seed"));
  return settings;
}

}  // namespace baton_models
