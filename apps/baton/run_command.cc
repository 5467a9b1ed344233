// `baton run CONFIG`: one rank of a run. Its rank, world size and store come from the
// environment of whatever launched it (baton launch, torchrun, Slurm, Open MPI); with
// none, it is a single-rank run.
#include <iostream>
#include <memory>

#include "baton/config.h"
#include "baton/error.h"
#include "bench_pipeline_record.h"
#include "cli_args.h"
#include "commands.h"
#include "training/trainer.h"
#include "training/world_env.h"

#ifndef BATON_DATA_DIR
#define BATON_DATA_DIR "configs/data"
#endif

namespace baton_app {

int run_run_command(const std::vector<std::string>& args) {
  // --bench-record FILE is for `baton bench pipeline`, which starts the ranks itself.
  CliArgs cli(args, {"set", "dump-dir", "bench-record"}, {"no-env", "resume"});
  if (cli.positional().size() > 1) {
    throw UsageError("baton run takes one CONFIG file, got '" + cli.positional()[1] + "'");
  }
  baton::ConfigOverrides overrides;
  overrides.set = cli.values("set");
  overrides.use_environment = !cli.flag("no-env");
  baton::Config config = cli.positional().empty()
                             ? baton::load_config_text("", "<embedded default>", overrides)
                             : baton::load_config_file(cli.positional()[0], overrides);
  TrainOptions options;
  options.dump_dir = cli.value("dump-dir");
  options.resume = cli.flag("resume");
  options.data_dir = BATON_DATA_DIR;
  std::unique_ptr<PipelineRecorder> recorder;
  if (cli.has("bench-record")) {
    recorder = std::make_unique<PipelineRecorder>(cli.value("bench-record"));
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

}  // namespace baton_app
