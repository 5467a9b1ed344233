#include "model_settings.h"

#include "model_specs.h"

namespace baton_models {

const baton::Choices<TargetKind>& target_kind_choices() {
  static const baton::Choices<TargetKind> choices = {{"auto", TargetKind::kFollowData},
                                                     {"classes", TargetKind::kClasses},
                                                     {"values", TargetKind::kValues}};
  return choices;
}

const baton::Choices<DataSource>& data_source_choices() {
  static const baton::Choices<DataSource> choices = {{"synthetic", DataSource::kSynthetic},
                                                     {"files", DataSource::kFiles},
                                                     {"text", DataSource::kText}};
  return choices;
}

const baton::Choices<TokenFormat>& token_format_choices() {
  static const baton::Choices<TokenFormat> choices = {{"auto", TokenFormat::kBySuffix},
                                                      {"bytes", TokenFormat::kBytes},
                                                      {"uint16", TokenFormat::kUint16},
                                                      {"int32", TokenFormat::kInt32},
                                                      {"npy", TokenFormat::kNpy}};
  return choices;
}

const baton::Choices<Prefetch>& prefetch_choices() {
  static const baton::Choices<Prefetch> choices = {{"auto", Prefetch::kWhereACpuIsFree},
                                                   {"true", Prefetch::kAlways},
                                                   {"false", Prefetch::kNever}};
  return choices;
}

const char* data_source_name(DataSource source) {
  for (const auto& [name, value] : data_source_choices()) {
    if (value == source) return name;
  }
  return "?";
}

baton::Setting<TargetKind> read_target_kind(const baton::Config& config) {
  return baton::read_choice(config.section("model"), "targets", target_kind_choices());
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
  settings.source = baton::read_choice(data, "source", data_source_choices());
  settings.tokens = baton::read_setting<std::string>(data, "tokens");
  settings.token_format = baton::read_choice(data, "token_format", token_format_choices());
  settings.prefetch = baton::read_choice(data, "prefetch", prefetch_choices());
  settings.inputs = baton::read_setting<std::vector<std::string>>(data, "inputs");
  settings.targets = baton::read_setting<std::string>(data, "targets");
  settings.batch_size = data.get_int("batch_size");
  settings.seed = static_cast<std::uint64_t>(config.section("run").get_int("seed"));
  return settings;
}

}  // namespace baton_models
