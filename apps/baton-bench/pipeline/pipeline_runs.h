// The processes of `baton bench pipeline`, `sweep` and `tune`: the configured ranks
// training for real (each recording its steps, see pipeline_record.h), and the
// unpipelined reference alone or as several concurrent copies (unpipelined.h). Every
// child runs under the bench's deadline; a failure is reported with the child's own words.
#pragma once

#include <string>
#include <vector>

#include "baton/config.h"
#include "candidate_rotation.h"
#include "command_line.h"
#include "pipeline_record.h"
#include "process_group.h"
#include "scratch_folder.h"

namespace baton_app {

struct PipelineBenchSettings {
  // The same for every process: [CONFIG] (empty: the embedded default) and --set values.
  std::string config;
  std::vector<std::string> sets;
  int ranks = 0, steps = 0, warmup = 0, timeout_s = 0;
};

// Declares the options both benches share on `command`: [CONFIG], --set, --steps, --warmup,
// --timeout, read into `settings` (whose values are the defaults). `ranks` stays 0 until the
// configuration is read.
void add_bench_settings_options(CLI::App& command, PipelineBenchSettings& settings);

// The configuration every process of the bench reads: [CONFIG] with the --set values.
baton::Config load_bench_config(const PipelineBenchSettings& settings);

// Trains `settings.ranks` local ranks for warmup + steps steps (rendezvous through a file
// store in `scratch`, no checkpoints or traces) and returns each rank's record.
std::vector<PipelineRecord> run_pipeline_ranks(const PipelineBenchSettings& settings,
                                               const ScratchFolder& scratch,
                                               BenchClock::time_point deadline);

// `baton bench tune`'s measurement: `settings.ranks` local ranks set every candidate of
// `plan` up side by side and train them in turns (training/candidate_rotation.h); rank 0's
// timings.
RotationResult run_rotation_ranks(const PipelineBenchSettings& settings, const RotationPlan& plan,
                                  const ScratchFolder& scratch, BenchClock::time_point deadline);

// The unpipelined reference run as `copies` processes at once: the mean of their median
// step times, in milliseconds.
double run_unpipelined(const PipelineBenchSettings& settings, int copies,
                       const ScratchFolder& scratch, BenchClock::time_point deadline);

}  // namespace baton_app
