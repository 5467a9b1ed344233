// The reference of `baton bench pipeline`: the same model, data, loss, optimizer, microbatches
// and threads, trained in one process without a pipeline — every microbatch through the whole
// model, gradients accumulated, one optimizer step. Runs as a hidden subcommand so the bench
// can start it alone and as N concurrent copies:
//
//   baton bench unpipelined-rank [CONFIG] [--set k=v]... --steps N --warmup W
//                                --local-ranks L --out FILE
//
// FILE receives one line, "step_seconds" and the measured steps' times.
#pragma once

#include <string>
#include <vector>

#include "command_line.h"

namespace baton_app {

extern const char* const kUnpipelinedRankCommand;

void add_unpipelined_rank_command(CommandLine& command_line);

// Reads FILE back; throws baton::Error when it is missing or malformed.
std::vector<double> read_unpipelined_steps(const std::string& path);

}  // namespace baton_app
