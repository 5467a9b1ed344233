#include "resolved_config.h"

#include <utility>

#include "baton/config_plugins.h"
#include "model_specs.h"

namespace baton_app {

baton::ConfiguredPlugins resolve_run_config(baton::Config& config) {
  baton::ConfiguredPlugins plugins =
      baton::resolve_plugins(config, baton::plugin_loader_for(config));
  config = baton_models::with_model_params(std::move(config));
  return plugins;
}

}  // namespace baton_app
