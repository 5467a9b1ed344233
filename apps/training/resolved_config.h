// A run's front door: the one place its configuration is written after loading. The schedule's
// and the transport's plugin parameters and the model's are checked against their tables and
// stored (schedule.name: auto leaves the schedule's for its choice, which a run applies here
// again). After it the configuration is read once, into typed settings (run_settings.h; the
// tuner's tuning/model_profiler.h) and the rank's plan (rank_pipeline.h: plan_rank), and stops
// there: every part below takes its own settings, never the configuration.
#pragma once

#include "baton/config.h"
#include "baton/config_plugins.h"

namespace baton_app {

// Returns the plugins it loaded (the schedule's is null for schedule: auto). Throws
// PluginError or ConfigError naming the key, as `baton config check` does.
baton::ConfiguredPlugins resolve_run_config(baton::Config& config);

}  // namespace baton_app
