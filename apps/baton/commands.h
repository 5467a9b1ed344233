// The subcommands of `baton`. Each takes the words after its name and returns the exit
// status; errors are thrown (baton::Error → exit 1, UsageError → exit 2).
#pragma once

#include <string>
#include <vector>

namespace baton_app {

int run_plugins_command(const std::vector<std::string>& args);
int run_config_command(const std::vector<std::string>& args);
int run_plan_command(const std::vector<std::string>& args);
int run_bench_command(const std::vector<std::string>& args);
int run_run_command(const std::vector<std::string>& args);
int run_launch_command(const std::vector<std::string>& args);
int run_export_command(const std::vector<std::string>& args);

}  // namespace baton_app
