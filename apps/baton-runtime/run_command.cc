// `baton run CONFIG`: one rank of a run. Its rank, world size and store come from the
// environment of whatever launched it (baton launch, torchrun, Slurm, Open MPI); with
// none, it is a single-rank run.
#include <iostream>
#include <memory>

#include "baton/config.h"
#include "baton/error.h"
#include "commands.h"
#include "training/pipeline_record.h"
#include "training/trainer.h"
#include "training/world_env.h"

#ifndef BATON_DATA_DIR
#define BATON_DATA_DIR "configs/data"
#endif

namespace baton_app {
namespace {

int run_rank(const RunOptions& run, const std::string& bench_record) {
  baton::ConfigOverrides overrides;
  overrides.set = run.sets;
  overrides.use_environment = !run.no_env;
  baton::Config config = run.config.empty()
                             ? baton::load_config_text("", "<embedded default>", overrides)
                             : baton::load_config_file(run.config, overrides);
  TrainOptions options;
  options.dump_dir = run.dump_dir;
  options.resume = run.resume;
  options.data_dir = BATON_DATA_DIR;
  std::unique_ptr<PipelineRecorder> recorder;
  if (!bench_record.empty()) {
    recorder = std::make_unique<PipelineRecorder>(bench_record);
    recorder->attach(&options);
  }
  const WorldInfo world = world_from_environment();
  try {
    train(config, options);
    if (recorder) recorder->write();
  } catch (const std::exception& error) {
    // Logged on the failing rank itself, with its rank, before the launcher's summary.
    std::cerr << "rank " << world.rank << " failed: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}

}  // namespace

void add_run_options(CLI::App& command, RunOptions& options) {
  command
      .add_option("CONFIG", options.config,
                  "the run's YAML (none: the embedded default, GPT on the shipped text)")
      ->type_name("YAML");
  add_repeatable_option(command, "--set", options.sets,
                        "override one option, after the file and the environment (repeatable)");
  command
      .add_option("--dump-dir", options.dump_dir,
                  "on a failure, write each rank's plan, trace and error here")
      ->type_name("DIR");
  command.add_flag("--no-env", options.no_env, "ignore BATON_<SECTION>_<KEY> variables");
  command.add_flag("--resume", options.resume,
                   "continue from the newest complete checkpoint in the run's folder");
}

void add_run_command(CommandLine& command_line) {
  struct Options {
    RunOptions run;
    std::string bench_record;
  };
  auto options = std::make_shared<Options>();
  CLI::App& run = command_line.add_command(
      command_line.root(), "run",
      "train as one rank of a run started by a launcher (baton launch, torchrun, Slurm, Open "
      "MPI); rank, world size and store come from its environment",
      [options] { return run_rank(options->run, options->bench_record); });
  add_run_options(run, options->run);
  // For `baton bench pipeline`, which starts the ranks itself: not listed.
  run.add_option("--bench-record", options->bench_record)->group("");
}

}  // namespace baton_app
