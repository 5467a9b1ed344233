// The commands baton-runtime runs (users type them as `baton <command>`): each declares its
// options and what runs it on the command line.
#pragma once

#include "command_line.h"

namespace baton_app {

void add_launch_command(CommandLine& command_line);
void add_run_command(CommandLine& command_line);
void add_export_command(CommandLine& command_line);
void add_config_command(CommandLine& command_line);

// The options `launch` passes on to every rank's `run`, declared the same way on both.
struct RunOptions {
  std::string config;  // empty: the embedded default
  std::vector<std::string> sets;
  std::string dump_dir;
  bool no_env = false;
  bool resume = false;
};
void add_run_options(CLI::App& command, RunOptions& options);

}  // namespace baton_app
