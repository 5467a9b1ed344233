// The commands baton-runtime runs (users type them as `baton <command>`): each declares its
// options and what runs it on the command line.
#pragma once

#include "command_line.h"

namespace baton_app {

void add_run_command(CommandLine& command_line);
void add_export_command(CommandLine& command_line);
void add_tune_command(CommandLine& command_line);

}  // namespace baton_app
