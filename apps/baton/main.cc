// baton: pipeline-parallel training on LibTorch, with schedules and transports as plugins.
//
// This is the front end, built on the plan layer alone (no LibTorch), so what needs no tensor
// answers at once: help, version, plan, plugins, config, and launch, which starts its ranks as
// `baton-runtime run`. Training and managing runs (run, export) is `baton-runtime`, measuring
// (bench) is `baton-bench`, both next to this program, which the front end replaces itself with
// (execv: same process id and environment) before reading any option: their options and `--help`
// are theirs.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/plugin.h"
#include "baton/runtime/compute_environment.h"
#include "command_line.h"
#include "commands.h"
#include "process_group.h"

namespace {

struct ForwardedCommand {
  const char* name;
  const char* program;
  const char* description;
};

const ForwardedCommand kForwarded[] = {
    {"run", "baton-runtime",
     "train as one rank of a run started by a launcher (baton launch, torchrun, Slurm, Open MPI)"},
    {"export", "baton-runtime",
     "merge a checkpoint into one state dict of the full model (Python: torch.load)"},
    {"tune", "baton-runtime",
     "measure the model and rank every schedule, stages per rank and microbatch count by "
     "simulated step time (no training)"},
    {"bench", "baton-bench",
     "measure: a transport against its library, a training step against its plan"},
};

// Replaces this process with `program` (next to this one) and `arguments`.
[[noreturn]] void continue_in(const std::string& program,
                              const std::vector<std::string>& arguments) {
  const std::string path = baton_app::sibling_program(program);
  std::vector<std::string> words{path};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> pointers;
  for (std::string& word : words) pointers.push_back(word.data());
  pointers.push_back(nullptr);
  ::execv(path.c_str(), pointers.data());
  throw baton::Error("cannot start " + path + ": " + std::strerror(errno) +
                     " (it is installed next to `baton`; reinstall baton)");
}

void print_version() {
  std::cout << "baton " << BATON_VERSION << " (plugin ABI " << BATON_ABI_MAJOR << "."
            << BATON_ABI_MINOR << ", LibTorch " << BATON_TORCH_VERSION
            << ", _GLIBCXX_USE_CXX11_ABI=" << BATON_CXX11_ABI << ")\n";
  // The BLAS LibTorch will use is the one libblas.so.3 resolves to (LibTorch links it by that
  // name); load just that library to name it, instead of all of LibTorch.
  ::dlopen("libblas.so.3", RTLD_LAZY | RTLD_GLOBAL);
  const baton::BlasInfo blas = baton::detect_blas();
  std::cout << "blas: " << blas.name << (blas.library.empty() ? "" : " (" + blas.library + ")")
            << "\ncpus: " << baton::cpus_available()
            << " available; threads per rank default to cpus / local ranks (run.threads)\n";
  if (blas.reference) std::cerr << "warning: " << blas.advice << "\n";
}

int dispatch(const std::vector<std::string>& args) {
  if (!args.empty()) {
    for (const ForwardedCommand& command : kForwarded) {
      if (args[0] != command.name) continue;
      // baton-runtime serves several commands and reads the name itself; baton-bench is the
      // bench alone.
      const bool runtime = std::string(command.program) == "baton-runtime";
      continue_in(command.program,
                  runtime ? args : std::vector<std::string>(args.begin() + 1, args.end()));
    }
  }
  baton_app::CommandLine command_line(
      "baton",
      "baton: pipeline-parallel training on LibTorch; schedules and transports are plugins.\n"
      "`baton COMMAND --help` shows a command's options. Configuration: docs/configuration.md");
  CLI::App& root = command_line.root();
  root.footer(
      "Plugins are searched in plugins.path (YAML), BATON_PLUGIN_PATH, next to this program,\n"
      "<prefix>/lib/baton, and the install folder.");
  for (const ForwardedCommand& command : kForwarded) {
    command_line.add_command(root, command.name, command.description).group("Commands");
  }
  baton_app::add_launch_command(command_line);
  baton_app::add_plan_command(command_line);
  baton_app::add_plugins_command(command_line);
  baton_app::add_config_command(command_line);
  baton_app::add_plot_command(command_line);
  command_line
      .add_command(root, "version",
                   "print versions (baton, plugin ABI, LibTorch), the BLAS LibTorch uses and "
                   "the CPUs available",
                   [] {
                     print_version();
                     return 0;
                   })
      .group("Commands");
  command_line
      .add_command(root, "help", "print this help",
                   [&root] {
                     std::cout << baton_app::usage_of(root);
                     return 0;
                   })
      .group("Commands");
  // Listed for the help; answered before parsing, as it needs no command.
  root.add_flag("--version", "print versions, like `baton version`");
  root.set_help_flag("-h,--help", "print this help (`baton COMMAND --help`: a command's)");
  if (args.size() == 1 && args[0] == "--version") {
    print_version();
    return 0;
  }
  return command_line.run(args);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return baton_app::run_guarded([&] { return dispatch(args); });
}
