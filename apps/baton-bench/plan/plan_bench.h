// `baton bench plan [--schedule NAME] [--ranks R] [--stages-per-rank V] [--microbatches M]
//                   [--sizes RxM,...] [--repeat N] [--format table|json]`
//
// How long the plan compiler takes in-process, and how much memory it holds, the cost a
// schedule search pays per candidate and what `baton plan` pays once: schedule build,
// validation, lowering (with its completion replay) and the simulation, each timed on its own
// over N repeats (median, min, max) and measured once for its allocations (the peak above
// what was live before it, and what it keeps), per lowered action — for one shape, or for
// several (--sizes) to show whether each phase is linear in the plan's actions. The issue 16
// target shape by default (interleaved 1F1B, 32 ranks x 4 stages x 256 microbatches, target
// <= 40 ms for compile + simulate). See docs/PERFORMANCE.md "Plan compiler".
#pragma once

#include "command_line.h"

namespace baton_app {

void add_plan_bench(CommandLine& command_line);

}  // namespace baton_app
