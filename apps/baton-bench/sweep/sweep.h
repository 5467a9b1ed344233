// `baton bench sweep [CONFIG] [--set k=v]... [--schedules LIST] [--microbatches LIST]
//                    [--steps N] [--warmup W] [--out DIR] [--format table|json] [--timeout S]`
//
// The configured pipeline for every schedule and microbatch count asked for, each point a
// real run (pipeline_runs.h) with the microbatch size of the configuration kept (the
// batch grows with the microbatches): real and predicted step time, and each rank's peak
// resident memory next to the simulator's peak of activations held. Writes SVG pictures
// (step time and memory against microbatches) into DIR, and fits the bytes one activation
// costs on each rank. See docs/PERFORMANCE.md.
#pragma once

#include "command_line.h"

namespace baton_app {

void add_sweep_bench(CommandLine& command_line);

}  // namespace baton_app
