#include "pipeline.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "baton/config.h"
#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/suggest.h"
#include "baton/validator.h"
#include "pipeline_analysis.h"
#include "pipeline_runs.h"
#include "scratch_folder.h"
#include "stopwatch.h"

namespace baton_app {
namespace {

// Microseconds one check of the configured built-in validators takes on a float32 tensor of
// `elements`, averaged over the roles each validator checks. 0 when no built-in validator
// is configured (plugins are not timed here).
double validator_check_us(const baton::Config& config, std::int64_t elements) {
  std::vector<std::unique_ptr<baton::Validator>> chain;
  for (const auto& name : config.section("validation").at("validators").as_string_list()) {
    if (auto validator = baton::make_builtin_validator(name)) chain.push_back(std::move(validator));
  }
  if (chain.empty()) return 0;
  const at::Tensor tensor = at::zeros({1, std::max<std::int64_t>(1, elements)});
  const baton::TensorMeta meta = baton::TensorMeta::of(tensor);
  constexpr int kIterations = 20000;
  int checks = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < kIterations; ++i) {
    for (baton::TensorRole role :
         {baton::TensorRole::kForwardInput, baton::TensorRole::kForwardOutput,
          baton::TensorRole::kGradientInput, baton::TensorRole::kGradientOutput}) {
      // All of a role's validators, as the executor runs them: one check of the chain.
      const baton::TensorCheck check{1, i % 8, role, 0, &meta};
      bool checked = false;
      for (const auto& validator : chain) {
        if (!validator->wants(role)) continue;
        validator->check(tensor, check);
        checked = true;
      }
      checks += checked ? 1 : 0;
    }
  }
  const double seconds = seconds_since(started);
  return checks > 0 ? seconds * 1e6 / checks : 0;
}

// One measurement of the configured step: its ranks for real, the plan's prediction and the
// unpipelined reference alone and as one copy per rank.
PipelineFigures measure_pipeline(PipelineBenchSettings settings, BenchClock::time_point deadline) {
  // Everything that can be checked here is, before any process starts: the configuration,
  // the plugins, the plan.
  baton::Config config = load_bench_config(settings);
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
  // Every compute action checks two tensors (F: its input and output; B: the gradient it
  // gets and the one it gives), on the busiest rank.
  figures.validator_check_us = validator_check_us(config, figures.transfer_bytes / 4);
  double busiest = 0;
  for (const auto& rank : figures.ranks_breakdown) busiest = std::max(busiest, rank.actions);
  figures.validator_share =
      figures.real_ms > 0 ? figures.validator_check_us * 2 * busiest / 1000 / figures.real_ms : 0;
  return figures;
}

int run_pipeline_bench(const PipelineBenchSettings& settings,
                       const std::vector<std::string>& baseline, const std::string& format) {
  const auto deadline = BenchClock::now() + std::chrono::seconds(settings.timeout_s);
  if (baseline.empty()) {
    const PipelineFigures figures = measure_pipeline(settings, deadline);
    std::cout << (format == "json" ? format_pipeline_json(figures)
                                   : format_pipeline_table(figures));
    return 0;
  }
  // The baseline first, then the configured step, in the same run and on the same machine.
  PipelineBenchSettings against = settings;
  against.sets.insert(against.sets.end(), baseline.begin(), baseline.end());
  std::cerr << "bench pipeline: the baseline first, with";
  for (const std::string& change : baseline) std::cerr << " " << change;
  std::cerr << std::endl;
  const PipelineFigures base = measure_pipeline(against, deadline);
  const PipelineFigures measured = measure_pipeline(settings, deadline);
  std::cout << (format == "json" ? format_comparison_json(measured, base, baseline)
                                 : format_comparison_table(measured, base, baseline));
  return 0;
}

}  // namespace

void add_pipeline_bench(CommandLine& command_line) {
  struct Options {
    PipelineBenchSettings settings;
    std::vector<std::string> baseline;
    std::string format = "table";
  };
  auto options = std::make_shared<Options>();
  options->settings.steps = 20;
  options->settings.warmup = 3;
  options->settings.timeout_s = 900;
  CLI::App& pipeline = command_line.add_command(
      command_line.root(), "pipeline",
      "the configured training step for real, against the plan's prediction from measured "
      "costs and the unpipelined model alone and as one copy per rank",
      [options] {
        return run_pipeline_bench(options->settings, options->baseline, options->format);
      });
  add_bench_settings_options(pipeline, options->settings);
  add_repeatable_option(pipeline, "--baseline", options->baseline,
                        "KEY=VALUE: measure the step with this setting too, first, in the same "
                        "run, and print each figure beside it with their ratio (--baseline "
                        "precision.compute=fp32 for a bf16 configuration)");
  add_format_option(pipeline, options->format, {"table", "json"}, "table or json");
}

}  // namespace baton_app
