// `baton bench transport`: two local ranks, a transport plugin loaded through the real
// loader, and per message size its bandwidth and latency next to those of the library it
// wraps, measured in the same run (raw gloo for gloo, ucx_perftest for UCX). See
// docs/PERFORMANCE.md.
#pragma once

#include "command_line.h"

namespace baton_app {

void add_transport_bench(CommandLine& command_line);

}  // namespace baton_app
