// Resolving the plugins a configuration names: load the schedule and transport plugins
// (plugins.path first) and check their `params:` subtrees against their tables.
#pragma once

#include <memory>

#include "baton/config.h"
#include "baton/export.h"
#include "baton/plan/compile.h"
#include "baton/plugin_loader.h"
#include "baton/schedule.h"

namespace baton {

struct ConfiguredPlugins {
  std::shared_ptr<LoadedPlugin> schedule;
  std::shared_ptr<LoadedPlugin> transport;
};

// A loader searching the configuration's plugins.path first.
BATON_API PluginLoader plugin_loader_for(const Config& config);

// Loads schedule.name and transport.name and stores their checked parameters in `config`
// (and refuses world.data_parallel > 1 with a transport that cannot all-reduce)
// (Config::plugin_params). schedule.name `auto` loads nothing (ConfiguredPlugins::schedule
// stays null): the run chooses the schedule when it starts (docs/auto.md). Throws PluginError or
// ConfigError; a plugin that cannot be found is reported with the origin of the name
// ("run.yaml:9:9: schedule.name: …").
BATON_API ConfiguredPlugins resolve_plugins(Config& config, const PluginLoader& loader);

// The same plugins, loaded and checked as resolve_plugins() does, for a configuration whose
// plugin parameters it already stored (a run's front door did): reads `config`, never writes.
BATON_API ConfiguredPlugins load_plugins(const Config& config, const PluginLoader& loader);

struct ConfiguredPlan {
  ScheduleShape shape;  // one pipeline's
  CompiledPlan plan;    // with REDUCE_GRAD when data_parallel > 1
  int data_parallel = 1;
};

// The configured schedule (its plugin and params, schedule.stages_per_rank and
// schedule.microbatches) compiled for a world of `world_ranks` ranks: world.data_parallel
// replicas of a pipeline of world_ranks / world.data_parallel ranks, whose plan then reduces
// the gradients (REDUCE_GRAD). Throws like compile_schedule, and ConfigError for
// schedule.name `auto` that was not resolved yet.
BATON_API ConfiguredPlan compile_configured_plan(const Config& config,
                                                 const ConfiguredPlugins& plugins, int world_ranks);

}  // namespace baton
