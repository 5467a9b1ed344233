// baton: pipeline-parallel training on LibTorch, with schedules and transports as plugins.
#include <iostream>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/plugin.h"
#include "baton/runtime/compute_environment.h"
#include "baton/suggest.h"
#include "cli_args.h"
#include "commands.h"

namespace {

const char* const kUsage = R"(usage: baton <command> [options]

commands:
  launch -n N [CONFIG] [--set k=v]...  train: run N local ranks (Gloo on loopback by default)
  run [CONFIG] [--set k=v]...          train as one rank of a run started by a launcher
                                       (baton launch, torchrun, Slurm, Open MPI)
                                       --resume: continue from the last complete checkpoint
  export CHECKPOINT [--out FILE]       merge a checkpoint into one state dict of the full
                                       model (Python: torch.load)
  plugins [--format table|json]        list every plugin found, with viability
  config check [FILE] [--set k=v]...   validate a run configuration and print it resolved
                                       (no FILE: the embedded default)
  config defaults                      print every option with its type, default and doc
  plan --schedule S --ranks R --microbatches M [--stages-per-rank V]
       [--costs F=1,B=2,I=1,W=1,comm=0] [--format table|csv|csv-comms|json|trace]
       [--param k=v]... [--out FILE]   build, check, lower and simulate a schedule's plan
  bench transport --transport NAME [--sizes 1K,64K,1M,16M,64M] [--iterations N]
       [--repeats R] [--format table|json] [--param k=v]... [--timeout S] [--no-reference]
                                       bandwidth and latency of a transport plugin on two
                                       local ranks, next to its library's own (docs/PERFORMANCE.md)
  version                              print versions (baton, plugin ABI, LibTorch), the BLAS
                                       LibTorch uses and the CPUs available

Plugins are searched in plugins.path (YAML), BATON_PLUGIN_PATH, next to this program,
<prefix>/lib/baton, and the install folder. Configuration: docs/configuration.md.
)";

int dispatch(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "plugins") return baton_app::run_plugins_command(rest);
  if (command == "config") return baton_app::run_config_command(rest);
  if (command == "plan") return baton_app::run_plan_command(rest);
  if (command == "bench") return baton_app::run_bench_command(rest);
  if (command == "run") return baton_app::run_run_command(rest);
  if (command == "launch") return baton_app::run_launch_command(rest);
  if (command == "export") return baton_app::run_export_command(rest);
  if (command == "version" || command == "--version") {
    std::cout << "baton " << BATON_VERSION << " (plugin ABI " << BATON_ABI_MAJOR << "."
              << BATON_ABI_MINOR << ", LibTorch " << TORCH_VERSION
              << ", _GLIBCXX_USE_CXX11_ABI=" << BATON_CXX11_ABI << ")\n";
    const baton::BlasInfo blas = baton::detect_blas();
    std::cout << "blas: " << blas.name << (blas.library.empty() ? "" : " (" + blas.library + ")")
              << "\ncpus: " << baton::cpus_available()
              << " available; threads per rank default to cpus / local ranks (run.threads)\n";
    if (blas.reference) std::cerr << "warning: " << blas.advice << "\n";
    return 0;
  }
  throw baton_app::UsageError(
      "unknown command '" + command + "'" +
      baton::did_you_mean(command, {"launch", "run", "export", "plugins", "config", "plan", "bench",
                                    "version", "help"}));
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return dispatch(args);
  } catch (const baton_app::UsageError& error) {
    std::cerr << "baton: " << error.what() << "\n\n" << kUsage;
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "baton: error: " << error.what() << "\n";
    return 1;
  }
}
