#include "bench_pipeline.h"

#include <algorithm>
#include <iostream>

#include "baton/config.h"
#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/suggest.h"
#include "bench_pipeline_analysis.h"
#include "bench_pipeline_record.h"
#include "bench_process.h"
#include "bench_scratch.h"
#include "bench_unpipelined.h"
#include "cli_args.h"

namespace baton_app {
namespace {

const char* const kUsage =
    "usage: baton bench pipeline [CONFIG] [--set key=value]... [--steps N] [--warmup W]\n"
    "                            [--format table|json] [--timeout SECONDS]\n";

// The last lines a failed child printed, indented, for the bench's error.
std::string tail_of(const std::string& path) {
  const std::string text = read_child_output(path);
  std::size_t start = text.size();
  for (int lines = 0; lines < 8 && start > 0; ++lines) {
    start = text.rfind('\n', start - 1);
    if (start == std::string::npos) {
      start = 0;
      break;
    }
  }
  std::string tail = text.substr(start);
  std::string indented;
  for (char c : tail) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
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

struct BenchSettings {
  std::vector<std::string> config_words;  // [CONFIG] or empty (the embedded default)
  std::vector<std::string> sets;          // the user's --set, then the bench's own
  int ranks = 0, steps = 0, warmup = 0, timeout_s = 0;
};

std::vector<std::string> with_sets(std::vector<std::string> argv, const BenchSettings& settings) {
  argv.insert(argv.end(), settings.config_words.begin(), settings.config_words.end());
  for (const auto& set : settings.sets) {
    argv.push_back("--set");
    argv.push_back(set);
  }
  return argv;
}

std::vector<PipelineRecord> run_pipeline_ranks(const BenchSettings& settings,
                                               const ScratchFolder& scratch,
                                               BenchClock::time_point deadline) {
  BenchSettings pipeline = settings;
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
    std::vector<std::string> argv = with_sets({own_program(), "run"}, pipeline);
    argv.push_back("--bench-record");
    argv.push_back(scratch.path() + "/rank" + std::to_string(rank) + ".record");
    logs.push_back(scratch.path() + "/rank" + std::to_string(rank) + ".log");
    group.spawn("rank " + std::to_string(rank), argv, logs.back(),
                {"RANK=" + std::to_string(rank), "WORLD_SIZE=" + std::to_string(settings.ranks),
                 "LOCAL_WORLD_SIZE=" + std::to_string(settings.ranks), "BATON_LAUNCH_RANK="});
  }
  wait_for(group, logs, "the pipelined run", deadline, settings.timeout_s);
  std::vector<PipelineRecord> records;
  for (int rank = 0; rank < settings.ranks; ++rank) {
    records.push_back(
        read_pipeline_record(scratch.path() + "/rank" + std::to_string(rank) + ".record"));
  }
  return records;
}

// Median step of `copies` unpipelined processes run at once (their medians' mean).
double run_unpipelined(const BenchSettings& settings, int copies, const ScratchFolder& scratch,
                       BenchClock::time_point deadline) {
  ProcessGroup group;
  std::vector<std::string> logs, outputs;
  for (int copy = 0; copy < copies; ++copy) {
    const std::string name = "unpipelined" + std::to_string(copies) + "-" + std::to_string(copy);
    outputs.push_back(scratch.path() + "/" + name + ".txt");
    logs.push_back(scratch.path() + "/" + name + ".log");
    std::vector<std::string> argv =
        with_sets({own_program(), "bench", kUnpipelinedRankCommand}, settings);
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

}  // namespace

int run_pipeline_bench(const std::vector<std::string>& args) {
  const CliArgs cli(args, {"set", "steps", "warmup", "format", "timeout"}, {});
  const std::string format = cli.value("format", "table");
  if (format != "table" && format != "json") {
    throw UsageError("--format must be table or json, got '" + format + "'" +
                     baton::did_you_mean(format, {"table", "json"}) + "\n" + kUsage);
  }
  if (cli.positional().size() > 1) {
    throw UsageError("baton bench pipeline takes one CONFIG, got '" + cli.positional()[1] + "'\n" +
                     kUsage);
  }
  BenchSettings settings;
  settings.config_words = cli.positional();
  settings.sets = cli.values("set");
  settings.steps = cli.integer("steps", 20, 2, 100000);
  settings.warmup = cli.integer("warmup", 3, 0, 100000);
  settings.timeout_s = cli.integer("timeout", 900, 1, 86400);
  const auto deadline = BenchClock::now() + std::chrono::seconds(settings.timeout_s);

  // Everything that can be checked here is, before any process starts: the configuration,
  // the plugins, the plan.
  baton::ConfigOverrides overrides;
  overrides.set = settings.sets;
  baton::Config config = settings.config_words.empty()
                             ? baton::load_config_text("", "<embedded default>", overrides)
                             : baton::load_config_file(settings.config_words[0], overrides);
  settings.ranks = static_cast<int>(config.section("world").get_int("ranks"));
  if (settings.ranks < 2) {
    throw baton::ConfigError("bench pipeline needs at least 2 ranks (world.ranks is " +
                             std::to_string(settings.ranks) + ")");
  }
  const baton::PluginLoader loader = baton::plugin_loader_for(config);
  const baton::ConfiguredPlugins plugins = baton::resolve_plugins(config, loader);
  const baton::CompiledPlan plan =
      baton::compile_configured_plan(config, plugins, settings.ranks).plan;

  ScratchFolder scratch;
  std::cerr << "bench pipeline: " << settings.ranks << " ranks, " << settings.warmup << " + "
            << settings.steps << " steps; then the unpipelined reference alone and as "
            << settings.ranks << " copies" << std::endl;
  PipelineFigures figures;
  const std::vector<PipelineRecord> records = run_pipeline_ranks(settings, scratch, deadline);
  analyse_pipeline(records, settings.warmup, plan.lowered, &figures);
  figures.schedule = plugins.schedule->name();
  figures.unpipelined_ms = run_unpipelined(settings, 1, scratch, deadline);
  figures.unpipelined_concurrent_ms = run_unpipelined(settings, settings.ranks, scratch, deadline);
  figures.efficiency = figures.real_ms > 0 ? figures.predicted_ms / figures.real_ms : 0;
  figures.speedup = figures.real_ms > 0 ? figures.unpipelined_ms / figures.real_ms : 0;
  figures.bound_ms = figures.unpipelined_concurrent_ms / settings.ranks * figures.ideal_ratio;
  std::cout << (format == "json" ? format_pipeline_json(figures) : format_pipeline_table(figures));
  return 0;
}

}  // namespace baton_app
