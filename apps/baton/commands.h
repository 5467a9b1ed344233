// The commands the front end answers itself, on the plan layer alone: each declares its
// options and what runs it on the command line.
#pragma once

#include "command_line.h"

namespace baton_app {

void add_plan_command(CommandLine& command_line);
void add_plugins_command(CommandLine& command_line);
void add_config_command(CommandLine& command_line);
void add_launch_command(CommandLine& command_line);
void add_plot_command(CommandLine& command_line);

}  // namespace baton_app
