// What a training run reads from its configuration, read once, at the edge: each component
// (progress, trace, checkpoints) is handed only its own part, typed, and never digs in the
// whole configuration itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "baton/config.h"
#include "checkpoint.h"
#include "progress.h"
#include "run_trace.h"

namespace baton_app {

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
};

RunSettings read_run_settings(const baton::Config& config);

}  // namespace baton_app
