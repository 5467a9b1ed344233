// Header-only: check a schedule over a grid of shapes without any ranks, the way the
// runtime will see it. For each (ranks, stages per rank, microbatches) the schedule
// accepts, the plan goes through compile_schedule() (check, build, validate, lower) and
// the simulator (it must finish, and report its bubble); shapes the schedule's check()
// refuses are listed with its reason, not counted as failures.
//
//   baton::Schedule& schedule = …;                      // e.g. from PluginLoader
//   const auto report = baton::testing::check_schedule_grid(schedule, "mine",
//                                                           {2, 4}, {1}, {1, 2, 4, 8});
//   if (!report.ok()) { std::cerr << report.text; return 1; }
//
// `report.text` has one line per shape and, for the first failure, the validator's
// message with the plan table and the failing step marked.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/params.h"
#include "baton/plan/compile.h"
#include "baton/plan/format.h"
#include "baton/plan/simulate.h"
#include "baton/plugin_loader.h"
#include "baton/schedule.h"

namespace baton {
namespace testing {

// A plugin's parameters as YAML's `<section>.params` would give them: `settings` (key,
// value text) checked against the plugin's table, defaults for the rest.
inline ParamValues plugin_params(
    const LoadedPlugin& plugin,
    const std::vector<std::pair<std::string, std::string>>& settings = {}) {
  RawParams raw;
  raw.key_path = "params";
  raw.origin = ValueOrigin{"test"};
  for (const auto& setting : settings) {
    RawValue value;
    value.scalar = setting.second;
    value.origin = ValueOrigin{"test setting " + setting.first + "=" + setting.second};
    value.key_origin = value.origin;
    raw.entries.emplace_back(setting.first, value);
  }
  const PluginDescriptor& descriptor = plugin.descriptor();
  return resolve_params(raw, descriptor.params, descriptor.num_params,
                        "plugin '" + plugin.name() + "'");
}

struct ScheduleGridReport {
  int checked = 0;   // shapes compiled and simulated
  int refused = 0;   // shapes the schedule's check() rejected (with its reason)
  int failed = 0;    // shapes whose plan is wrong
  std::string text;  // a line per shape, then the first failure in full
  bool ok() const { return failed == 0 && checked > 0; }
};

inline ScheduleGridReport check_schedule_grid(const Schedule& schedule, const std::string& name,
                                              const std::vector<int>& ranks,
                                              const std::vector<int>& stages_per_rank,
                                              const std::vector<int>& microbatches) {
  ScheduleGridReport report;
  std::ostringstream lines;
  std::string first_failure;
  for (int r : ranks) {
    for (int v : stages_per_rank) {
      for (int m : microbatches) {
        const ScheduleShape shape{r, v, m};
        lines << name << ": ranks=" << r << " stages_per_rank=" << v << " microbatches=" << m
              << ": ";
        try {
          schedule.check(shape);
        } catch (const ConfigError& refused) {
          ++report.refused;
          lines << "refused by the schedule (" << refused.what() << ")\n";
          continue;
        }
        try {
          const CompiledPlan plan = compile_schedule(schedule, shape, name);
          const SimulationResult simulated = simulate(plan.lowered);
          ++report.checked;
          lines << "ok, bubble " << simulated.bubble_fraction << ", makespan " << simulated.makespan
                << "\n";
        } catch (const std::exception& error) {
          ++report.failed;
          lines << "FAILED\n";
          if (first_failure.empty()) first_failure = error.what();
        }
      }
    }
  }
  report.text = lines.str();
  if (!first_failure.empty()) report.text += "\nfirst failure:\n" + first_failure + "\n";
  return report;
}

}  // namespace testing
}  // namespace baton
