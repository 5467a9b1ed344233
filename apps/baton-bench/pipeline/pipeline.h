// `baton bench pipeline [CONFIG] [--set k=v]... [--steps N] [--warmup W] [--format table|json]
//                       [--timeout S]`
//
// One run, four measurements of the configured training step (docs/PERFORMANCE.md):
//  (a) real: the configured ranks train for real (local processes, the configured transport);
//      the step time is the median interval between rank 0's step starts after warm-up, and
//      each rank's executor timeline says where its time went;
//  (b) predicted: the plan simulator replays the configured schedule with the per-stage
//      F/B/I/W costs and the transfer time measured in (a);
//  (c) unpipelined: the same model, data, loss, optimizer, microbatches and threads in one
//      process, every microbatch through the whole model;
//  (d) unpipelined, concurrent: (c) run as one copy per rank at once, which measures what
//      this machine gives that many busy processes.
// It prints real_ms, predicted_ms, unpipelined_ms, unpipelined_concurrent_ms, efficiency
// (predicted / real), speedup (unpipelined / real), bound (the schedule's ideal on this
// machine) and where real and predicted differ.
#pragma once

#include "command_line.h"

namespace baton_app {

void add_pipeline_bench(CommandLine& command_line);

}  // namespace baton_app
