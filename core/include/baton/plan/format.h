// Human- and tool-readable renderings of plans and simulations: the step x rank table used in
// every plan error message, a Chrome trace for Perfetto, and a JSON summary for `--format json`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "baton/export.h"
#include "baton/plan/chrome_trace.h"
#include "baton/plan/plan.h"
#include "baton/plan/simulate.h"

namespace baton {

// A cell of the table to point at: its row gets ` <-- ERROR HERE (rank N)`.
struct TableMarker {
  int rank = 0;
  int step = 0;
};

// The plan as a grid, like PyTorch's `_format_pipeline_order`:
//            Rank 0 Rank 1
//   Step 00: 0F0
//   Step 01: 0F1    1F0
// Step labels are zero-padded to the widest step number, idle slots are blank, and trailing
// blanks are trimmed except on marked rows (so the marker lines up after the last column).
// Several markers on one row are merged into `(ranks 0, 2)`.
BATON_API std::string format_plan_table(const Plan& plan,
                                        const std::vector<TableMarker>& markers = {});

// Chrome trace-event JSON (open in Perfetto or chrome://tracing): one process per rank named
// "Rank N", compute on thread "compute" and SEND/RECV on thread "comms", one "X" event per
// timeline entry. One cost unit is 1000 us, so unit costs read as milliseconds.
BATON_API std::string format_chrome_trace(const SimulationResult& result);

// The events of that trace, one per timeline entry (for other pictures of the same plan).
BATON_API std::vector<TraceEvent> simulation_trace_events(const SimulationResult& result);

// A JSON object with the schedule name, ranks, makespan, overall bubble fraction and, per rank,
// busy time, idle time, bubble fraction and peak activations.
BATON_API std::string format_simulation_summary_json(const SimulationResult& result);

}  // namespace baton
