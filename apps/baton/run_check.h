// Everything about a run that can be known before any rank starts, beyond what loading the
// file checks: the plugins and their parameters, the model's parameters, the validators by
// name, and the plan the schedule compiles for this world (an invalid plan is refused here,
// not at launch). `baton config check` and `baton launch` both run it.
#pragma once

#include "baton/config.h"

namespace baton_app {

// Resolves `config` at the front door every rank goes through (training/resolved_config.h),
// so that `config check` prints what the run will read, then checks the rest. Throws
// baton::ConfigError (or PluginError) naming the value and its origin.
void check_run_before_start(baton::Config& config);

}  // namespace baton_app
