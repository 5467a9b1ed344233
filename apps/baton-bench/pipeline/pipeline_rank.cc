#include "pipeline_rank.h"

#include <iostream>
#include <memory>
#include <string>

#include "baton/config.h"
#include "candidate_rotation.h"
#include "pipeline_record.h"
#include "run_options.h"
#include "training/trainer.h"
#include "training/world_info.h"

#ifndef BATON_DATA_DIR
#define BATON_DATA_DIR "configs/data"
#endif

namespace baton_app {

const char* const kPipelineRankCommand = "pipeline-rank";

namespace {

struct PipelineRankOptions {
  RunOptions run;
  std::string record;  // where the rank's record (or, on rank 0, the rotation's timings) goes
  std::string rotate;  // a rotation plan: train its candidates in turns instead of the run
};

// Trains the run as the trainer does, with a recorder listening to every step.
void record_run(const PipelineRankOptions& options) {
  const baton::Config config = load_run_config(options.run);
  TrainOptions train_options;
  train_options.data_dir = BATON_DATA_DIR;
  PipelineRecorder recorder(options.record);
  recorder.attach(&train_options);
  train(config, train_options);
  recorder.write();
}

int run_pipeline_rank(const PipelineRankOptions& options) {
  const WorldInfo world = world_from_environment();
  try {
    if (options.rotate.empty()) {
      record_run(options);
    } else {
      const RotationResult result =
          rotate_candidates(options.run, read_rotation_plan(options.rotate), BATON_DATA_DIR);
      if (world.rank == 0) write_rotation_result(result, options.record);
    }
  } catch (const std::exception& error) {
    // Logged on the failing rank itself, with its rank, for the bench's summary.
    std::cerr << "rank " << world.rank << " failed: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}

}  // namespace

void add_pipeline_rank_command(CommandLine& command_line) {
  auto options = std::make_shared<PipelineRankOptions>();
  CLI::App& command = command_line.add_command(
      command_line.root(), kPipelineRankCommand,
      "started by `baton bench pipeline|sweep|tune`, not by hand: one rank of the pipeline",
      [options] { return run_pipeline_rank(*options); });
  command.group("");  // internal
  add_config_options(command, options->run);
  command.add_option("--record", options->record)->required();
  command.add_option("--rotate", options->rotate);
}

}  // namespace baton_app
