// The options of one rank's run (`baton run`), which `baton launch` takes too and passes on
// to every rank: declared once for both.
#pragma once

#include <string>
#include <vector>

#include "command_line.h"

namespace baton_app {

struct RunOptions {
  std::string config;  // empty: the embedded default
  std::vector<std::string> sets;
  std::string dump_dir;
  bool no_env = false;
  bool resume = false;
  bool overwrite = false;
};

void add_run_options(CLI::App& command, RunOptions& options);
// Only what selects the configuration: CONFIG, --set, --no-env (for commands that do not
// train, such as `baton tune`).
void add_config_options(CLI::App& command, RunOptions& options);

// The configuration these options select (the file or the embedded default, the
// environment unless --no-env, then every --set).
baton::Config load_run_config(const RunOptions& options);

}  // namespace baton_app
