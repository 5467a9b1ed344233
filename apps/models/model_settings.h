// The `model` and `data` sections, read once at the edge: the model catalog and the batch
// sources get these, never the whole configuration. Values keep their origins, so an error
// found while building still names the file:line it came from. No LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/params.h"
#include "baton/setting.h"

namespace baton_models {

// model.targets: what a scripted loss receives.
enum class TargetKind { kFollowData, kClasses, kValues };  // auto, classes, values
// data.source.
enum class DataSource { kSynthetic, kFiles, kText };
// data.token_format: how a token file is read (token_stream.h).
enum class TokenFormat { kBySuffix, kBytes, kUint16, kInt32, kNpy };  // auto, bytes, …
// data.prefetch.
enum class Prefetch { kWhereACpuIsFree, kAlways, kNever };  // auto, true, false

struct ModelSettings {
  baton::Setting<std::string> name;                 // model.name
  baton::Setting<std::string> path;                 // model.path (torchscript)
  baton::Setting<std::vector<std::string>> stages;  // model.stages (torchscript: one file each)
  baton::Setting<std::string> loss;                 // model.loss: a name or a .pt file
  baton::Setting<std::int64_t> ignore_index;        // model.ignore_index
  baton::Setting<double> label_smoothing;           // model.label_smoothing (cross_entropy)
  baton::Setting<TargetKind> targets;               // model.targets (a scripted loss)
  baton::ParamValues params;  // model.params, checked against the model's table, defaults in
};

struct DataSettings {
  baton::Setting<DataSource> source;                // data.source
  baton::Setting<std::string> tokens;               // data.tokens (text)
  baton::Setting<TokenFormat> token_format;         // data.token_format (text)
  baton::Setting<Prefetch> prefetch;                // data.prefetch
  baton::Setting<std::vector<std::string>> inputs;  // data.inputs (files): one per argument
  baton::Setting<std::string> targets;              // data.targets (files)
  std::int64_t batch_size = 0;                      // data.batch_size
  std::uint64_t seed = 0;                           // run.seed: every rank draws the same batches
};

// Each choice key's words and their enumerators, for its declaration (config_sections.cc)
// and its reader alike.
const baton::Choices<TargetKind>& target_kind_choices();
const baton::Choices<DataSource>& data_source_choices();
const baton::Choices<TokenFormat>& token_format_choices();
const baton::Choices<Prefetch>& prefetch_choices();

// data.source's word in the configuration, for messages.
const char* data_source_name(DataSource source);

// What the model section says, model.params as with_model_params() checked and stored them
// (a run's front door: training/resolved_config.h). Reads `config`, never writes it.
ModelSettings read_model_settings(const baton::Config& config);

// model.targets alone, for the configuration's check (model.params not yet checked then).
baton::Setting<TargetKind> read_target_kind(const baton::Config& config);

DataSettings read_data_settings(const baton::Config& config);

}  // namespace baton_models
