#include "pipeline_runs.h"

#include "baton/error.h"
#include "median.h"
#include "owned_outputs.h"
#include "pipeline_analysis.h"
#include "pipeline_rank.h"
#include "process_group.h"
#include "unpipelined.h"

namespace baton_app {
namespace {

// What a failed child said, indented, for the bench's error: its "failed" line (a step
// error goes on with the whole plan), or else its last lines.
std::string tail_of(const std::string& path) {
  const std::string text = read_child_output(path);
  std::size_t start = text.size();
  const std::size_t failed = text.find(" failed: ");
  if (failed != std::string::npos) {
    const std::size_t line = text.rfind('\n', failed);
    start = line == std::string::npos ? 0 : line;
    return "\n    " + text.substr(start == 0 ? 0 : start + 1,
                                  text.find('\n', failed) - (start == 0 ? 0 : start + 1));
  }
  for (int lines = 0; lines < 8 && start > 0; ++lines) {
    start = text.rfind('\n', start - 1);
    if (start == std::string::npos) {
      start = 0;
      break;
    }
  }
  std::string indented = start == 0 ? "\n    " : "";
  for (char c : text.substr(start))
    indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
  return indented;
}

void wait_for(ProcessGroup& group, const std::vector<std::string>& logs, const std::string& what,
              BenchClock::time_point deadline, int timeout_s) {
  std::string failures;
  std::size_t index = 0;
  for (const ProcessOutcome& outcome : group.wait_all(deadline, std::chrono::seconds(5))) {
    if (!outcome.succeeded()) {
      failures += "\n  " + outcome.describe() + "; its last output:" + tail_of(logs.at(index));
    }
    ++index;
  }
  if (!failures.empty()) {
    throw baton::Error("bench pipeline: " + what + " failed (limit --timeout " +
                       std::to_string(timeout_s) + " s):" + failures);
  }
}

std::vector<std::string> with_sets(std::vector<std::string> argv,
                                   const PipelineBenchSettings& settings) {
  if (!settings.config.empty()) argv.push_back(settings.config);
  for (const auto& set : settings.sets) {
    argv.push_back("--set");
    argv.push_back(set);
  }
  return argv;
}

}  // namespace

void add_bench_settings_options(CLI::App& command, PipelineBenchSettings& settings) {
  command.add_option("CONFIG", settings.config, "the run's YAML (none: the embedded default)")
      ->type_name("YAML");
  add_repeatable_option(command, "--set", settings.sets, "override one option of it (repeatable)");
  command.add_option("--steps", settings.steps, "measured steps")
      ->capture_default_str()
      ->check(integer_in(2, 100000));
  command.add_option("--warmup", settings.warmup, "steps run first and not measured")
      ->capture_default_str()
      ->check(integer_in(0, 100000));
  command.add_option("--timeout", settings.timeout_s, "seconds the whole bench may take")
      ->capture_default_str()
      ->check(integer_in(1, 86400));
}

baton::Config load_bench_config(const PipelineBenchSettings& settings) {
  baton::ConfigOverrides overrides;
  overrides.set = settings.sets;
  return settings.config.empty() ? baton::load_config_text("", "<embedded default>", overrides)
                                 : baton::load_config_file(settings.config, overrides);
}

namespace {

std::string record_path(const ScratchFolder& scratch, int rank) {
  return rank_file(scratch.path(), rank, ".record");
}

// Starts `settings.ranks` local ranks of the bench (`baton-bench pipeline-rank`: rendezvous through
// a file store in `scratch`, no checkpoints or traces), each with `extra` after its options and its
// record file (record_path), and waits for them all.
void run_ranks(const PipelineBenchSettings& settings, const ScratchFolder& scratch,
               const std::vector<std::string>& extra, const std::string& what,
               BenchClock::time_point deadline) {
  PipelineBenchSettings pipeline = settings;
  const std::string store = scratch.make_subfolder("store");
  for (const std::string& set : std::vector<std::string>{
           "run.name=bench", "run.output_dir=" + scratch.path() + "/runs",
           "run.steps=" + std::to_string(settings.warmup + settings.steps), "run.log_every=1000000",
           "checkpoint.enabled=false", "trace.enabled=false", "world.rendezvous=file",
           "world.file=" + store}) {
    pipeline.sets.push_back(set);
  }
  ProcessGroup group;
  std::vector<std::string> logs;
  for (int rank = 0; rank < settings.ranks; ++rank) {
    std::vector<std::string> argv = with_sets({own_program(), kPipelineRankCommand}, pipeline);
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("--record");
    argv.push_back(record_path(scratch, rank));
    logs.push_back(rank_file(scratch.path(), rank, ".log"));
    group.spawn("rank " + std::to_string(rank), argv, logs.back(),
                {"RANK=" + std::to_string(rank), "WORLD_SIZE=" + std::to_string(settings.ranks),
                 "LOCAL_WORLD_SIZE=" + std::to_string(settings.ranks), "BATON_LAUNCH_RANK="});
  }
  wait_for(group, logs, what, deadline, settings.timeout_s);
}

}  // namespace

std::vector<PipelineRecord> run_pipeline_ranks(const PipelineBenchSettings& settings,
                                               const ScratchFolder& scratch,
                                               BenchClock::time_point deadline) {
  run_ranks(settings, scratch, {}, "the pipelined run", deadline);
  std::vector<PipelineRecord> records;
  for (int rank = 0; rank < settings.ranks; ++rank) {
    records.push_back(read_pipeline_record(record_path(scratch, rank)));
  }
  return records;
}

RotationResult run_rotation_ranks(const PipelineBenchSettings& settings, const RotationPlan& plan,
                                  const ScratchFolder& scratch, BenchClock::time_point deadline) {
  const std::string plan_path = scratch.path() + "/rotation.json";
  write_rotation_plan(plan, plan_path);
  run_ranks(settings, scratch, {"--rotate", plan_path}, "the candidates' rotation", deadline);
  return read_rotation_result(record_path(scratch, 0));
}

double run_unpipelined(const PipelineBenchSettings& settings, int copies,
                       const ScratchFolder& scratch, BenchClock::time_point deadline) {
  ProcessGroup group;
  std::vector<std::string> logs, outputs;
  for (int copy = 0; copy < copies; ++copy) {
    const std::string name = "unpipelined" + std::to_string(copies) + "-" + std::to_string(copy);
    outputs.push_back(scratch.path() + "/" + name + ".txt");
    logs.push_back(scratch.path() + "/" + name + ".log");
    std::vector<std::string> argv = with_sets({own_program(), kUnpipelinedRankCommand}, settings);
    for (const std::string& word :
         {std::string("--steps"), std::to_string(settings.steps), std::string("--warmup"),
          std::to_string(settings.warmup), std::string("--local-ranks"),
          std::to_string(settings.ranks), std::string("--out"), outputs.back()}) {
      argv.push_back(word);
    }
    group.spawn(name, argv, logs.back());
  }
  wait_for(group, logs, copies == 1 ? "the unpipelined reference" : "the concurrent references",
           deadline, settings.timeout_s);
  double sum = 0;
  for (const auto& output : outputs) sum += median_of(read_unpipelined_steps(output));
  return sum / copies * 1000;
}

}  // namespace baton_app
