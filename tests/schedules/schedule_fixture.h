// Loading the built-in schedule plugins the way a run does (by name, through the plugin loader),
// and what the tests know about each schedule independently of its code: which shapes it must
// accept and where it places stages.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "baton/config.h"
#include "baton/plan/plan.h"
#include "baton/plugin_loader.h"
#include "baton/schedule.h"

namespace baton {
namespace testing {

// A schedule object together with the library it came from; members are destroyed in reverse
// order, so the object goes before its library is closed.
struct LoadedSchedule {
  std::shared_ptr<LoadedPlugin> plugin;
  PluginPtr<Schedule> schedule;

  Schedule* operator->() const { return schedule.get(); }
};

// `params` as a YAML `params:` mapping would give them; resolved against the plugin's own table,
// so defaults and required keys are the plugin's.
inline LoadedSchedule load_schedule(const std::string& name,
                                    const std::map<std::string, std::string>& params = {}) {
  LoadedSchedule loaded;
  loaded.plugin = PluginLoader().load(PluginKind::kSchedule, name);
  RawParams raw;
  raw.key_path = "schedule.params";
  for (const auto& [key, value] : params) {
    RawValue raw_value;
    raw_value.scalar = value;
    raw.entries.emplace_back(key, raw_value);
  }
  const PluginDescriptor& descriptor = loaded.plugin->descriptor();
  const ParamValues values = resolve_params(raw, descriptor.params, descriptor.num_params,
                                            "schedule plugin '" + name + "'");
  loaded.schedule = loaded.plugin->create_as<Schedule>(values);
  return loaded;
}

// "r=4 v=2 m=8"
inline std::string shape_text(const ScheduleShape& shape) {
  return "r=" + std::to_string(shape.ranks) + " v=" + std::to_string(shape.stages_per_rank) +
         " m=" + std::to_string(shape.microbatches);
}

// What a test expects of one schedule plugin.
struct ScheduleSpec {
  std::string name;
  Placement placement = Placement::kLoop;
  std::function<bool(const ScheduleShape&)> accepts;  // the documented constraints
};

// gtest prints parameters in failure messages; the name is all that matters.
inline void PrintTo(const ScheduleSpec& spec, std::ostream* out) {
  *out << spec.name;
}

inline std::vector<ScheduleSpec> built_in_schedules() {
  return {
      {"gpipe", Placement::kLoop, [](const ScheduleShape& s) { return s.stages_per_rank == 1; }},
      {"1f1b", Placement::kLoop,
       [](const ScheduleShape& s) { return s.stages_per_rank == 1 && s.microbatches >= s.ranks; }},
      {"interleaved_1f1b", Placement::kLoop, [](const ScheduleShape&) { return true; }},
      {"looped_bfs", Placement::kLoop, [](const ScheduleShape&) { return true; }},
      {"zero_bubble", Placement::kLoop, [](const ScheduleShape&) { return true; }},
      {"zbv", Placement::kV, [](const ScheduleShape& s) { return s.stages_per_rank == 2; }},
      {"v_half", Placement::kV, [](const ScheduleShape& s) { return s.stages_per_rank == 2; }},
      {"v_min", Placement::kV, [](const ScheduleShape& s) { return s.stages_per_rank == 2; }},
      {"dualpipev", Placement::kV,
       [](const ScheduleShape& s) {
         return s.stages_per_rank == 2 && s.microbatches >= 2 * s.ranks;
       }},
  };
}

inline std::string spec_name(const ::testing::TestParamInfo<ScheduleSpec>& info) {
  return info.param.name;
}

}  // namespace testing
}  // namespace baton
