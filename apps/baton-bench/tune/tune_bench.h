// `baton bench tune [CONFIG] [--set k=v]... [--top N] [--rounds R] [--steps N] [--warmup W]
//                   [--out DIR] [--format table|json] [--timeout S]`
//
// Whether `schedule: auto` chooses well: the search of `baton tune` (the measured profile,
// every schedule plugin × stages per rank × microbatch count the configuration leaves open),
// then its top N candidates trained for real side by side in one set of local ranks over the
// configured transport, taking turns of N steps for R rounds (candidate_rotation.h;
// by default measured_order.h's rounds_for). It prints predicted against measured
// step time per candidate, their rank correlation (Spearman) beside what a perfect prediction
// would typically score against a measurement this noisy, the measurement's own
// repeatability (even rounds against odd), and how far
// auto's choice (the first predicted) is from the best measured candidate; with an SVG of
// predicted against measured (docs/auto.md).
#pragma once

#include "command_line.h"

namespace baton_app {

void add_tune_bench(CommandLine& command_line);

}  // namespace baton_app
