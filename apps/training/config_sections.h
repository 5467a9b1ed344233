// The configuration sections of baton's own components, which the core does not know:
// the model, the data, the optimizer, checkpoints and traces. baton-runtime and baton-bench
// add them before they read a configuration (the core keeps run, world, schedule,
// transport, validation and plugins).
#pragma once

namespace baton_app {

// Adds them once; later calls do nothing.
void add_app_config_sections();

}  // namespace baton_app
