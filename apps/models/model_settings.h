// The `model` and `data` sections, read once at the edge: the model catalog and the batch
// sources get these, never the whole configuration. Values keep their origins, so an error
// found while building still names the file:line it came from. No LibTorch.
#pragma once

#include <cstdint>

#include "baton/config.h"
#include "baton/params.h"

namespace baton_models {

struct ModelSettings {
  baton::ParamValue name;             // model.name
  baton::ParamValue path;             // model.path (torchscript)
  baton::ParamValue stages;           // model.stages (torchscript: one file per stage)
  baton::ParamValue loss;             // model.loss
  baton::ParamValue ignore_index;     // model.ignore_index (cross_entropy)
  baton::ParamValue label_smoothing;  // model.label_smoothing (cross_entropy)
  baton::ParamValue targets;          // model.targets: auto, classes or values (a scripted loss)
  baton::ParamValues params;  // model.params, checked against the model's table, defaults in
};

struct DataSettings {
  baton::ParamValue source;        // data.source: synthetic, text or files
  baton::ParamValue tokens;        // data.tokens (text)
  baton::ParamValue token_format;  // data.token_format (text)
  baton::ParamValue prefetch;      // data.prefetch: auto, true or false
  baton::ParamValue inputs;        // data.inputs (files): one file per forward argument
  baton::ParamValue targets;       // data.targets (files)
  std::int64_t batch_size = 0;     // data.batch_size
  std::uint64_t seed = 0;          // run.seed: every rank draws the same batches
};

// What the model section says, model.params as with_model_params() checked and stored them
// (a run's front door: training/resolved_config.h). Reads `config`, never writes it.
ModelSettings read_model_settings(const baton::Config& config);

DataSettings read_data_settings(const baton::Config& config);

}  // namespace baton_models
