// `baton plan`: build a schedule's plan for a shape, check it, lower it, simulate it, and
// print it as a table, CSV, a JSON summary or a Chrome trace — no ranks, no tensors.
#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/files.h"
#include "baton/plan/compile.h"
#include "baton/plan/csv.h"
#include "baton/plan/format.h"
#include "baton/plan/gradient_reduction.h"
#include "baton/plan/shape_limits.h"
#include "baton/plan/simulate.h"
#include "baton/plugin_loader.h"
#include "baton/suggest.h"
#include "commands.h"
#include "tuning/model_profile.h"
#include "tuning/schedule_search.h"

namespace baton_app {
namespace {

baton::SimulationCosts parse_costs(const std::string& text) {
  baton::SimulationCosts costs;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const auto equals = item.find('=');
    const std::string key = item.substr(0, equals);
    const std::string value_text = equals == std::string::npos ? "" : item.substr(equals + 1);
    char* end = nullptr;
    const double value = std::strtod(value_text.c_str(), &end);
    if (value_text.empty() || *end != '\0' || value < 0) {
      throw UsageError("--costs: '" + item + "' must be KEY=non-negative number");
    }
    if (key == "F") {
      costs.forward = value;
    } else if (key == "B") {
      costs.backward = value;
    } else if (key == "I") {
      costs.backward_input = value;
    } else if (key == "W") {
      costs.backward_weight = value;
    } else if (key == "comm") {
      costs.transfer_time = value;
    } else if (key == "send") {
      costs.send_overhead = value;
    } else if (key == "recv") {
      costs.recv_overhead = value;
    } else if (key == "reduce") {
      costs.reduce_grad = value;
    } else {
      throw UsageError(
          "--costs: unknown cost '" + key + "'" +
          baton::did_you_mean(key, {"F", "B", "I", "W", "comm", "send", "recv", "reduce"}) +
          "; costs are F, B, I, W, comm (transfer time), send (sender overhead), "
          "recv (posting one receive), reduce (a stage's gradient all-reduce, with "
          "--data-parallel)");
    }
  }
  return costs;
}

struct SelectedSchedule {
  std::shared_ptr<baton::LoadedPlugin> plugin;
  baton::RawParams params;
};

struct PlanOptions {
  std::string schedule;
  baton::ScheduleShape shape;
  std::vector<std::string> params;
  std::string costs;
  std::string format = "table";
  std::string out;
  std::vector<std::string> plugin_path;
  int data_parallel = 1;
  std::string recompute = "off";
  std::string params_precision = "fp32";  // precision.params: what a profile's stages hold
  std::string reduce_precision = "fp32";  // precision.reduce: what their all-reduce moves
};

// --recompute off|on|S,S,...: the stages whose B (or I) runs their forward again and which
// keep only their inputs until then (model.recompute).
std::vector<bool> recomputed(const std::string& text, int num_stages) {
  std::vector<bool> stages(static_cast<std::size_t>(num_stages), text == "on");
  if (text == "on" || text == "off") return stages;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    char* end = nullptr;
    const long index = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || index < 0 || index >= num_stages) {
      throw UsageError("--recompute: '" + item + "' is not one of the plan's stages (0 to " +
                       std::to_string(num_stages - 1) + "); write off, on, or stages such as 0,2");
    }
    stages[static_cast<std::size_t>(index)] = true;
  }
  return stages;
}

// Every stage's own costs (the uniform ones where none are measured), recomputing as asked.
void apply_recompute(const std::vector<bool>& stages, baton::MeasuredCosts* costs) {
  if (costs->stages.size() < stages.size()) {
    costs->stages.resize(stages.size(), costs->uniform_stage());
  }
  for (std::size_t s = 0; s < stages.size(); ++s) costs->stages[s].recompute = stages[s];
}

SelectedSchedule select_schedule(const PlanOptions& options, const baton::PluginLoader& loader) {
  SelectedSchedule selected;
  selected.params = params_from_command_line(options.params, "schedule.params");
  std::string name = options.schedule;
  if (name.rfind("csv:", 0) == 0) {
    baton::RawValue path;
    path.scalar = name.substr(4);
    path.origin = {"--schedule " + name};
    selected.params.entries.insert(selected.params.entries.begin(), {"path", path});
    name = "csv";
  }
  selected.plugin = loader.load(baton::PluginKind::kSchedule, name);
  return selected;
}

std::string render(const std::string& format, const baton::CompiledPlan& compiled,
                   const baton::SimulationResult& result) {
  if (format == "csv") return baton::plan_to_csv(compiled.compute);
  if (format == "csv-comms") return baton::plan_to_csv(compiled.lowered);
  if (format == "json") return baton::format_simulation_summary_json(result) + "\n";
  if (format == "trace") return baton::format_chrome_trace(result);
  std::ostringstream out;
  out << baton::format_plan_table(compiled.compute) << "\n";
  // compile_schedule() refused the plan if it were wrong; say that it was checked.
  out << "valid: " << compiled.lowered.num_ranks << " ranks x " << compiled.lowered.num_stages
      << " stages x " << compiled.lowered.num_microbatches
      << " microbatches; every forward before its backward, every send matched by a receive, "
         "and the plan runs to the end without deadlock\n";
  out << std::fixed << std::setprecision(3) << "makespan " << result.makespan << ", bubble "
      << std::setprecision(1) << 100.0 * result.bubble_fraction << "%\n";
  for (std::size_t rank = 0; rank < result.ranks.size(); ++rank) {
    const auto& stats = result.ranks[rank];
    out << "  rank " << rank << ": idle " << std::setprecision(3) << stats.idle_time << ", bubble "
        << std::setprecision(1) << 100.0 * stats.bubble_fraction << "%, peak activations "
        << stats.peak_activations;
    if (stats.peak_memory_bytes() > 0) {
      out << " (peak memory " << std::setprecision(1) << stats.peak_memory_bytes() / (1 << 20)
          << " MiB)";
    }
    if (stats.reduce_time > 0) {
      out << ", gradient all-reduce " << std::setprecision(3) << stats.reduce_time << " ("
          << stats.exposed_reduce_time << " exposed)";
    }
    out << "\n";
  }
  return out.str();
}

// --costs FILE.json: a profile from `baton tune`. The microbatch size is the profile's batch
// over --microbatches, and the model is cut into the plan's stages balanced on the measured
// costs, as the search does.
bool names_a_profile(const std::string& costs) {
  return costs.size() > 5 && costs.compare(costs.size() - 5, 5, ".json") == 0;
}

baton::MeasuredCosts costs_from_profile(const PlanOptions& options, std::string* described) {
  const ModelProfile profile = read_profile(options.costs);
  const int microbatches = options.shape.microbatches;
  if (profile.batch_size % microbatches != 0) {
    throw UsageError("--costs " + options.costs + ": the profile's batch of " +
                     std::to_string(profile.batch_size) + " does not split into " +
                     std::to_string(microbatches) + " microbatches");
  }
  const MicrobatchProfile& measured =
      profile.at(profile.batch_size / microbatches, "--costs " + options.costs);
  const std::vector<int> bounds = balanced_cuts(measured, options.shape.num_stages());
  // AdamW's state, as the search assumes for adam and adamw; the precision as asked.
  ParameterBytes parameters;
  if (options.params_precision == "bf16") parameters.low_precision_copy = 0.5;
  if (options.reduce_precision == "bf16") parameters.reduced = 0.5;
  std::ostringstream held;
  held << 4 * parameters.held_per_byte();
  *described =
      "costs: profile " + options.costs + " (" + profile.model + ", microbatches of " +
      std::to_string(measured.microbatch_size) + ", cuts " + cuts_text(bounds) +
      "), in seconds; parameters hold " + held.str() +
      " bytes each (weights, float32 gradients, AdamW's moments" +
      (options.params_precision == "bf16" ? ", bf16 weights next to float32 masters" : "") + ")" +
      (options.data_parallel > 1 ? ", all-reduced in " + options.reduce_precision : "") + "\n";
  return simulation_costs(measured, bounds, profile.transfer, parameters, options.data_parallel,
                          profile.split_backward_factor);
}

int run_plan(const PlanOptions& options) {
  std::string costs_described;
  baton::MeasuredCosts costs = names_a_profile(options.costs)
                                   ? costs_from_profile(options, &costs_described)
                                   : baton::MeasuredCosts(parse_costs(options.costs));
  const baton::PluginLoader loader(options.plugin_path);
  const SelectedSchedule selected = select_schedule(options, loader);
  const auto& descriptor = selected.plugin->descriptor();
  const baton::ParamValues params =
      baton::resolve_params(selected.params, descriptor.params, descriptor.num_params,
                            "schedule plugin '" + selected.plugin->name() + "'");
  const auto schedule = selected.plugin->create_as<baton::Schedule>(params);
  baton::CompiledPlan compiled =
      baton::compile_schedule(*schedule, options.shape, selected.plugin->name());
  // Every replica runs this plan; each stage's gradients are reduced across them.
  if (options.data_parallel > 1) compiled = baton::with_gradient_reduction(compiled);
  // Only a trace draws the timeline, and the lowered plan is in `compiled` already: a
  // timeline entry per action and a copy of the plan would be most of the command's memory.
  baton::SimulationOptions simulation;
  simulation.timeline = options.format == "trace";
  simulation.keep_plan = false;
  const std::vector<bool> recompute = recomputed(options.recompute, compiled.lowered.num_stages);
  std::string recompute_described;
  if (options.recompute != "off") {
    apply_recompute(recompute, &costs);
    recompute_described = "recompute: stages";
    for (std::size_t s = 0; s < recompute.size(); ++s) {
      if (recompute[s]) recompute_described += " " + std::to_string(s);
    }
    recompute_described +=
        ": each B or I runs the stage's forward again; from F until then a microbatch keeps only "
        "the stage's inputs (peak memory counts them)\n";
  }
  const baton::SimulationResult result = baton::simulate(compiled.lowered, costs, simulation);

  std::string text = render(options.format, compiled, result);
  if (options.format == "table") text += costs_described + recompute_described;
  if (options.out.empty()) {
    std::cout << text;
  } else {
    baton::write_file_atomically(options.out, text);
    std::cerr << "wrote " << options.out << "\n";
  }
  return 0;
}

}  // namespace

void add_plan_command(CommandLine& command_line) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App& plan = command_line.add_command(
      command_line.root(), "plan",
      "build a schedule's plan for a shape, check it, lower it and simulate it: no ranks, no "
      "tensors",
      [options] { return run_plan(*options); });
  plan.group("Commands");
  plan.add_option("--schedule", options->schedule,
                  "a schedule plugin's name or file, or csv:FILE (a plan written as CSV)")
      ->required()
      ->type_name("NAME|PATH|csv:FILE");
  plan.add_option("--ranks", options->shape.ranks, "pipeline ranks")
      ->required()
      ->check(integer_in(1, baton::kMaxRanks));
  plan.add_option("--stages-per-rank", options->shape.stages_per_rank,
                  "stages on each rank (2 or more: interleaved, V schedules)")
      ->capture_default_str()
      ->check(integer_in(1, baton::kMaxStagesPerRank));
  plan.add_option("--microbatches", options->shape.microbatches, "microbatches per step")
      ->required()
      ->check(integer_in(1, baton::kMaxMicrobatches));
  plan.add_option("--data-parallel", options->data_parallel,
                  "replicas of the pipeline (world.data_parallel): each stage's gradients are "
                  "all-reduced across them after its last backward (REDUCE_GRAD)")
      ->capture_default_str()
      ->check(integer_in(1, baton::kMaxRanks));
  add_repeatable_option(plan, "--param", options->params,
                        "a schedule parameter (schedule.params.KEY)");
  plan.add_option("--costs", options->costs,
                  "simulated time of each action kind: F, B, I, W, comm (transfer), send (the "
                  "sender's overhead); default F=1,B=2,I=1,W=1,comm=0; or a profile written "
                  "by baton tune (FILE.json): per-stage costs and memory, in seconds")
      ->type_name("F=1,B=2,...|FILE.json");
  plan.add_option("--recompute", options->recompute,
                  "off, on, or stages (0,2) that recompute (model.recompute): their B or I costs "
                  "one more forward, and until then a microbatch holds only their inputs")
      ->capture_default_str()
      ->type_name("off|on|S,S");
  plan.add_option("--params", options->params_precision,
                  "with a profile: the stages' parameters (precision.params); bf16 holds a bf16 "
                  "copy next to the float32 masters")
      ->capture_default_str()
      ->check(one_of({"fp32", "bf16"}));
  plan.add_option("--reduce", options->reduce_precision,
                  "with a profile and --data-parallel: the gradient all-reduce's dtype "
                  "(precision.reduce); bf16 moves half the bytes")
      ->capture_default_str()
      ->check(one_of({"fp32", "bf16"}));
  add_format_option(plan, options->format, {"table", "csv", "csv-comms", "json", "trace"},
                    "table (ranks as columns, steps as rows, then the simulation), csv (compute "
                    "actions), csv-comms (with the transfers), json (simulation summary), trace "
                    "(Chrome trace of the simulation)");
  plan.add_option("--out", options->out, "write to FILE (atomically) instead of stdout")
      ->type_name("FILE");
  add_plugin_path_option(plan, options->plugin_path);
}

}  // namespace baton_app
