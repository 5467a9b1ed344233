// One rank of `baton bench transport`: a process the command starts twice (rank 0 and rank
// 1) by re-executing its own binary as `baton bench transport-rank …` (a hidden
// subcommand). Each rank meets the other through a FileStore, loads the transport plugin
// through the real loader, connects, and runs the measurements of method.h on the
// plugin and, interleaved round by round, on the reference channel; rank 0 writes the
// figures to a file the command reads.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "baton/params.h"
#include "baton/plugin_loader.h"
#include "command_line.h"

namespace baton_app {

// The hidden subcommand's name, after `bench`.
extern const char* const kBenchRankCommand;

struct RankJob {
  int rank = 0;
  pid_t parent = 0;                 // the rank exits if this process goes away
  std::string plugin;               // path of the plugin's .so file
  std::vector<std::string> params;  // "key=value" transport parameters
  std::string store;                // folder of the rendezvous FileStore
  std::string gloo_store;           // folder for the raw gloo reference; empty: none
  std::vector<std::size_t> sizes;
  int iterations = 0;  // 0: plan_size() decides per size
  int repeats = 1;
  std::chrono::milliseconds timeout{60000};  // every wait and rendezvous
  std::string figures;                       // rank 0 writes its figures here
};

// The words after `bench` that start a rank for `job`, and the hidden command that reads
// them back and runs the rank.
std::vector<std::string> rank_command_line(const RankJob& job);
void add_rank_command(CommandLine& command_line);

// Checks "key=value" assignments against the plugin's parameter table. Throws ConfigError.
baton::ParamValues resolve_transport_params(const baton::LoadedPlugin& plugin,
                                            const std::vector<std::string>& assignments);

// Runs one rank; returns its exit status (messages go to stderr).
int run_bench_rank(const RankJob& job);

}  // namespace baton_app
