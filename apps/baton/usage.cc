#include "usage.h"

#include <exception>
#include <iostream>

#include "cli_args.h"

namespace baton_app {

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

int run_guarded(const std::function<int()>& dispatch) {
  try {
    return dispatch();
  } catch (const UsageError& error) {
    std::cerr << "baton: " << error.what() << "\n\n" << kUsage;
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "baton: error: " << error.what() << "\n";
    return 1;
  }
}

}  // namespace baton_app
