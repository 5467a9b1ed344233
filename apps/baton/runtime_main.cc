// baton-runtime: the commands of `baton` that train and manage runs (launch, run, export,
// config), on LibTorch. Users type `baton <command>`; the front end (main.cc) execs this
// program for these commands, and `baton launch` starts its ranks as `baton-runtime run`.
#include <iostream>
#include <string>
#include <vector>

#include "baton/suggest.h"
#include "cli_args.h"
#include "commands.h"
#include "usage.h"

namespace {

int dispatch(const std::vector<std::string>& args) {
  const std::string command = args.empty() ? "" : args[0];
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (command == "config") return baton_app::run_config_command(rest);
  if (command == "run") return baton_app::run_run_command(rest);
  if (command == "launch") return baton_app::run_launch_command(rest);
  if (command == "export") return baton_app::run_export_command(rest);
  throw baton_app::UsageError("baton-runtime runs launch, run, export and config; '" + command +
                              "' is not one of them" +
                              baton::did_you_mean(command, {"launch", "run", "export", "config"}) +
                              " (the other commands are `baton`'s)");
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return baton_app::run_guarded([&] { return dispatch(args); });
}
