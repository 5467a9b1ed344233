// `baton run CONFIG`: one rank of a run. Its rank, world size and store come from the
// environment of whatever launched it (baton launch, torchrun, Slurm, Open MPI); with
// none, it is a single-rank run.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "baton/config.h"
#include "baton/error.h"
#include "baton/files.h"
#include "commands.h"
#include "owned_outputs.h"
#include "run_options.h"
#include "training/trainer.h"
#include "training/world_info.h"

#ifndef BATON_DATA_DIR
#define BATON_DATA_DIR "configs/data"
#endif

namespace baton_app {
namespace {

// A rank started by `baton launch` dies with it, even when the launcher is SIGKILLed and
// cannot stop it: no rank is left behind training for nobody.
void die_with_the_launcher() {
  const char* launcher = std::getenv(kLaunchPid);
  if (launcher == nullptr) return;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The launcher may have died before the request took effect.
  if (std::to_string(getppid()) != launcher) {
    throw baton::Error("the launcher (process " + std::string(launcher) +
                       ") is gone; this rank stops");
  }
}

// The files a dump writes: rank<N>.pt (the run's tensors), rank<N>.error (its failure).
bool is_dump_file_name(const std::string& name) {
  return is_rank_file_name(name, {".pt", ".error"});
}

int run_rank(const RunOptions& run) {
  die_with_the_launcher();
  const baton::Config config = load_run_config(run);
  TrainOptions options;
  options.dump_dir = run.dump_dir;
  options.resume = run.resume;
  options.overwrite = run.overwrite;
  options.data_dir = BATON_DATA_DIR;
  const WorldInfo world = world_from_environment();
  // Before training: a folder that cannot take the dump, or holds files it would replace (a
  // checkpoint's rank*.pt), is refused now, not after the run.
  if (!run.dump_dir.empty()) {
    claim_output_folder(run.dump_dir, "--dump-dir", ".baton-dump", is_dump_file_name);
  }
  try {
    train(config, options);
  } catch (const std::exception& error) {
    // Logged on the failing rank itself, with its rank, before the launcher's summary.
    std::cerr << "rank " << world.rank << " failed: " << error.what() << std::endl;
    if (!run.dump_dir.empty()) {
      // The whole error (a step's carries the plan with the failing step marked), kept.
      try {
        baton::make_folders(run.dump_dir, "--dump-dir");
        const std::string path = rank_file(run.dump_dir, world.rank, ".error");
        baton::write_file_atomically(path, std::string(error.what()) + "\n");
        std::cerr << "rank " << world.rank << ": the error is in " << path << std::endl;
      } catch (const std::exception& unwritable) {
        std::cerr << "rank " << world.rank << ": --dump-dir: " << unwritable.what() << std::endl;
      }
    }
    return 1;
  }
  return 0;
}

}  // namespace

void add_run_command(CommandLine& command_line) {
  auto options = std::make_shared<RunOptions>();
  CLI::App& run = command_line.add_command(
      command_line.root(), "run",
      "train as one rank of a run started by a launcher (baton launch, torchrun, Slurm, Open "
      "MPI); rank, world size and store come from its environment",
      [options] { return run_rank(*options); });
  add_run_options(run, *options);
}

}  // namespace baton_app
