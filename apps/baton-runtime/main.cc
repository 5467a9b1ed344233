// baton-runtime: the commands of `baton` that train and manage runs (run, export, tune), on
// LibTorch. Users type `baton <command>`; the front end execs this program for these
// commands, and `baton launch` starts its ranks as `baton-runtime run`.
#include <string>
#include <vector>

#include "command_line.h"
#include "commands.h"
#include "training/config_sections.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return baton_app::run_guarded([&] {
    baton_app::add_app_config_sections();
    // Named `baton`: its usage lines are the ones users type.
    baton_app::CommandLine command_line(
        "baton", "baton-runtime: training and managing runs (`baton run|export|tune`)");
    baton_app::add_run_command(command_line);
    baton_app::add_export_command(command_line);
    baton_app::add_tune_command(command_line);
    return command_line.run(args);
  });
}
