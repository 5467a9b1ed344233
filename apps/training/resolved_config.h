// A run's front door: the one place its configuration is written after loading. The schedule's
// and the transport's plugin parameters and the model's are checked against their tables and
// stored (schedule.name: auto leaves the schedule's for its choice, which a run applies here
// again). Everything after it reads the configuration, never writes it: each part takes its
// typed settings (run_settings.h, model_settings.h, optimizer_settings.h, ...) or a const
// configuration, and the plugins are loaded from it as they are (baton::load_plugins).
#pragma once

#include "baton/config.h"
#include "baton/config_plugins.h"

namespace baton_app {

// Returns the plugins it loaded (the schedule's is null for schedule: auto). Throws
// PluginError or ConfigError naming the key, as `baton config check` does.
baton::ConfiguredPlugins resolve_run_config(baton::Config& config);

}  // namespace baton_app
