// `baton plan`: build a schedule's plan for a shape, check it, lower it, simulate it, and
// print it as a table, CSV, a JSON summary or a Chrome trace — no ranks, no tensors.
#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "baton/atomic_file.h"
#include "baton/config.h"
#include "baton/plan/compile.h"
#include "baton/plan/csv.h"
#include "baton/plan/format.h"
#include "baton/plan/simulate.h"
#include "baton/plugin_loader.h"
#include "baton/suggest.h"
#include "cli_args.h"
#include "commands.h"

namespace baton_app {
namespace {

const char* const kPlanUsage =
    "usage: baton plan --schedule NAME|PATH|csv:FILE --ranks R [--stages-per-rank V]\n"
    "                  --microbatches M [--param key=value]... [--costs F=1,B=2,I=1,W=1,comm=0]\n"
    "                  [--format table|csv|csv-comms|json|trace] [--out FILE]\n";

int positive_int(const CliArgs& cli, const std::string& name, const std::string& fallback) {
  const std::string text = cli.value(name, fallback);
  if (text.empty()) throw UsageError("--" + name + " is required\n" + kPlanUsage);
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || value < 1 || value > 100000) {
    throw UsageError("--" + name + " must be a positive integer, got '" + text + "'");
  }
  return static_cast<int>(value);
}

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
    } else {
      throw UsageError("--costs: unknown cost '" + key + "'" +
                       baton::did_you_mean(key, {"F", "B", "I", "W", "comm", "send"}) +
                       "; costs are F, B, I, W, comm (transfer time), send (sender overhead)");
    }
  }
  return costs;
}

struct SelectedSchedule {
  std::shared_ptr<baton::LoadedPlugin> plugin;
  baton::RawParams params;
};

SelectedSchedule select_schedule(const CliArgs& cli, const baton::PluginLoader& loader) {
  SelectedSchedule selected;
  selected.params.key_path = "schedule.params";
  selected.params.origin = {"--param"};
  std::string name = cli.value("schedule");
  if (name.empty()) throw UsageError(std::string("--schedule is required\n") + kPlanUsage);
  if (name.rfind("csv:", 0) == 0) {
    baton::RawValue path;
    path.scalar = name.substr(4);
    path.origin = {"--schedule " + name};
    selected.params.entries.emplace_back("path", path);
    name = "csv";
  }
  for (const auto& assignment : cli.values("param")) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw UsageError("--param " + assignment + ": expected key=value");
    }
    baton::RawValue value;
    value.scalar = assignment.substr(equals + 1);
    value.origin = {"--param " + assignment};
    selected.params.entries.emplace_back(assignment.substr(0, equals), value);
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
  out << std::fixed << std::setprecision(3) << "makespan " << result.makespan << ", bubble "
      << std::setprecision(1) << 100.0 * result.bubble_fraction << "%\n";
  for (std::size_t rank = 0; rank < result.ranks.size(); ++rank) {
    const auto& stats = result.ranks[rank];
    out << "  rank " << rank << ": idle " << std::setprecision(3) << stats.idle_time << ", bubble "
        << std::setprecision(1) << 100.0 * stats.bubble_fraction << "%, peak activations "
        << stats.peak_activations << "\n";
  }
  return out.str();
}

}  // namespace

int run_plan_command(const std::vector<std::string>& args) {
  CliArgs cli(args,
              {"schedule", "ranks", "stages-per-rank", "microbatches", "param", "costs", "format",
               "out", "plugin-path"},
              {});
  if (!cli.positional().empty()) {
    throw UsageError("baton plan takes options only, got '" + cli.positional()[0] + "'\n" +
                     kPlanUsage);
  }
  const std::string format = cli.value("format", "table");
  const std::vector<std::string> formats = {"table", "csv", "csv-comms", "json", "trace"};
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    throw UsageError("--format must be table, csv, csv-comms, json or trace, got '" + format + "'" +
                     baton::did_you_mean(format, formats));
  }
  baton::ScheduleShape shape;
  shape.ranks = positive_int(cli, "ranks", "");
  shape.stages_per_rank = positive_int(cli, "stages-per-rank", "1");
  shape.microbatches = positive_int(cli, "microbatches", "");
  const baton::SimulationCosts costs = parse_costs(cli.value("costs", ""));

  const baton::PluginLoader loader(cli.values("plugin-path"));
  const SelectedSchedule selected = select_schedule(cli, loader);
  const auto& descriptor = selected.plugin->descriptor();
  const baton::ParamValues params =
      baton::resolve_params(selected.params, descriptor.params, descriptor.num_params,
                            "schedule plugin '" + selected.plugin->name() + "'");
  const auto schedule = selected.plugin->create_as<baton::Schedule>(params);
  const baton::CompiledPlan compiled =
      baton::compile_schedule(*schedule, shape, selected.plugin->name());
  const baton::SimulationResult result = baton::simulate(compiled.lowered, costs);

  const std::string text = render(format, compiled, result);
  const std::string out = cli.value("out");
  if (out.empty()) {
    std::cout << text;
  } else {
    baton::write_file_atomically(out, text);
    std::cerr << "wrote " << out << "\n";
  }
  return 0;
}

}  // namespace baton_app
