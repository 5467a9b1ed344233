// What a training run reads from its configuration, read once, at the front door
// (resolved_config.h), into typed parts: each component (the world's checks, the rendezvous,
// the transport, the compute, the model and its batches, the stages, the optimizer,
// evaluation, progress, trace, checkpoints) is handed only its own part and never digs in the
// whole configuration itself. Values that an error found later must place keep their origin
// (baton::Setting: "run.yaml:12:10").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/params.h"
#include "baton/setting.h"
#include "checkpoint.h"
#include "model_settings.h"
#include "optimizer_settings.h"
#include "precision_settings.h"
#include "progress.h"
#include "run_trace.h"
#include "stage_settings.h"
#include "world_info.h"

namespace baton_app {

// How the ranks meet and what their transport is told (rank_connections.h).
struct ConnectionSettings {
  std::string rendezvous;               // world.rendezvous: tcp or file
  std::string address;                  // world.address (a launcher's store address wins)
  int port = 0;                         // world.port (likewise)
  std::string file;                     // world.file (the file store's)
  baton::ParamValues transport_params;  // transport.params, checked by its plugin
};

// The eval section (evaluation.h).
struct EvalSettings {
  int every = 0;                                    // 0: off
  int batches = 4;                                  // drawn sources
  baton::Setting<std::vector<std::string>> inputs;  // eval.inputs (data.source: files)
  baton::Setting<std::string> targets;              // eval.targets (likewise)
  baton::Setting<std::string> tokens;               // eval.tokens (text); empty: data.tokens
};

struct RunSettings {
  std::string name;     // run.name
  std::string run_dir;  // <run.output_dir>/<run.name>: metrics, traces, checkpoints
  int steps = 0;
  std::uint64_t seed = 0;
  std::chrono::milliseconds timeout{60000};    // world.timeout_s
  std::chrono::milliseconds heartbeat{10000};  // world.heartbeat_s; 0: off
  ProgressSettings progress;
  TraceSettings trace;
  CheckpointSettings checkpoint;
  WorldSettings world;  // world_info.h
  ConnectionSettings connections;
  baton_models::ModelSettings model;
  baton_models::DataSettings data;
  StageSettings stages;
  OptimizerSettings optimizer;
  EvalSettings eval;
  PrecisionSettings precision;
};

// `config` went through the run's front door (resolved_config.h): the model's and the
// transport's parameters are checked and stored in it. Reads it, never writes it.
RunSettings read_run_settings(const baton::Config& config);

}  // namespace baton_app
