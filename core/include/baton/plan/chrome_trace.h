// The one writer of Chrome trace-event JSON (Perfetto, chrome://tracing), for the simulated
// plan (`baton plan --format trace`, plan_trace.json) and the measured run (trace.json) alike:
// one process per rank named "Rank N", a "compute" and a "comms" thread in each.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "baton/export.h"
#include "baton/plan/action_rules.h"

namespace baton {

enum class TraceLane : int { kCompute = 0, kComms = 1 };

struct TraceEvent {
  int rank = 0;
  TraceLane lane = TraceLane::kCompute;
  std::string name;
  std::string category;  // empty: none
  double start_us = 0;
  double duration_us = 0;
  std::vector<std::pair<std::string, std::int64_t>> args;  // shown when the event is selected
};

// What a rank's stages keep for their microbatches after a compute action (action_rules.h),
// as the event's args "kept graph", "kept inputs" and "kept weight graph": the simulated
// plan's trace and the measured run's say it alike.
BATON_API void add_kept_args(const KeptTally& kept, TraceEvent* event);

// `ranks` processes (each named, even when it has no event) and one complete ("X") event per
// entry of `events`; `schedule`, when given, is recorded in otherData. With
// `ranks_per_replica` (data parallelism: a pipeline's ranks) below `ranks`, each process is
// named with its replica too: "Rank 3 (replica 1)".
BATON_API std::string write_chrome_trace(const std::vector<TraceEvent>& events, int ranks,
                                         const std::string& schedule = {},
                                         int ranks_per_replica = 0);

}  // namespace baton
