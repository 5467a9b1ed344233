#include "run_check.h"

#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/plugin_loader.h"
#include "training/resolved_config.h"

namespace baton_app {

void check_run_before_start(baton::Config& config) {
  // The front door every rank goes through, and the plugins it loaded.
  const baton::ConfiguredPlugins plugins = resolve_run_config(config);
  const baton::PluginLoader loader = baton::plugin_loader_for(config);
  // By convention a plugin's float parameter named *_s is a duration (docs/writing-plugins):
  // a negative, non-finite or absurd one fails here, not when the plugin starts.
  const bool auto_schedule = baton::schedule_chosen_at_start(config);
  for (const char* section : {"schedule", "transport"}) {
    if (auto_schedule && std::string(section) == "schedule") continue;  // no plugin yet
    for (const auto& [key, value] : config.plugin_params(section).all()) {
      if (value.type() != baton::ParamType::kFloat || key.size() < 3 ||
          key.compare(key.size() - 2, 2, "_s") != 0) {
        continue;
      }
      config.plugin_params(section).get_seconds(key, std::string(section) + ".params." + key);
    }
  }
  const baton::ParamValue& validators = config.section("validation").at("validators");
  for (const std::string& name : validators.as_string_list()) {
    if (name == "off" || name == "shape_dtype" || name == "strict" || name == "finite") continue;
    try {
      loader.load(baton::PluginKind::kValidator, name);
    } catch (const baton::PluginError& error) {
      throw baton::ConfigError(validators.origin().description + ": validation.validators: '" +
                               name +
                               "' is neither built in (shape_dtype, strict, finite, off) nor a "
                               "validator plugin: " +
                               error.what());
    }
  }
  // schedule.name: auto chooses the plan at run time, after measuring the model.
  if (baton::schedule_chosen_at_start(config)) return;
  baton::compile_configured_plan(config, plugins,
                                 static_cast<int>(config.section("world").get_int("ranks")));
}

}  // namespace baton_app
