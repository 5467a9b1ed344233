// `baton config check [FILE]` and `baton config defaults`.
#include <iostream>

#include "baton/config.h"
#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/plugin_loader.h"
#include "cli_args.h"
#include "commands.h"
#include "model_catalog.h"

namespace baton_app {
namespace {

constexpr const char* kEmbeddedDefault = "<embedded default>";

int check(const CliArgs& cli) {
  if (cli.positional().size() > 2) {
    throw UsageError("baton config check takes one FILE, got '" + cli.positional()[2] + "'");
  }
  baton::ConfigOverrides overrides;
  overrides.set = cli.values("set");
  overrides.use_environment = !cli.flag("no-env");
  baton::Config config = cli.positional().size() == 2
                             ? baton::load_config_file(cli.positional()[1], overrides)
                             : baton::load_config_text("", kEmbeddedDefault, overrides);
  const baton::PluginLoader loader = baton::plugin_loader_for(config);
  baton::resolve_plugins(config, loader);
  const baton_models::ModelEntry& model =
      baton_models::find_model(config.section("model").at("name"));
  config.set_plugin_params(
      "model", baton::resolve_params(config.raw_params("model"), model.params, model.num_params,
                                     std::string("model '") + model.name + "'"));
  std::cout << baton::format_resolved_config(config);
  std::cout << "# OK: " << config.source() << " is valid\n";
  return 0;
}

int defaults(const CliArgs& cli) {
  std::cout << baton::format_config_defaults();
  for (const auto& model : baton_models::model_catalog()) {
    std::cout << "model.params for model '" << model.name << "': " << model.doc << "\n"
              << baton::format_param_table(model.params, model.num_params, "model.params.", "")
              << "\n";
  }
  const baton::PluginLoader loader(cli.values("plugin-path"));
  for (const auto& listing : loader.discover()) {
    if (!listing.loaded) continue;
    const auto& descriptor = listing.plugin->descriptor();
    const std::string section = baton::plugin_kind_name(descriptor.kind);
    std::cout << section << ".params for " << section << " plugin '" << descriptor.name
              << "': " << (descriptor.description ? descriptor.description : "") << "\n";
    if (descriptor.num_params == 0) {
      std::cout << "  (no parameters)\n\n";
      continue;
    }
    std::cout << baton::format_param_table(descriptor.params, descriptor.num_params,
                                           section + ".params.", "")
              << "\n";
  }
  std::cout << "Environment: BATON_<SECTION>_<KEY> overrides section.key (for example "
               "BATON_SCHEDULE_MICROBATCHES=8);\nBATON_<SECTION>_PARAMS_<KEY> overrides "
               "section.params.key. Order: file < environment < --set.\n";
  return 0;
}

}  // namespace

int run_config_command(const std::vector<std::string>& args) {
  CliArgs cli(args, {"set", "plugin-path"}, {"no-env"});
  const std::string verb = cli.positional().empty() ? "" : cli.positional()[0];
  if (verb == "check") return check(cli);
  if (verb == "defaults") return defaults(cli);
  throw UsageError("baton config needs 'check [FILE]' or 'defaults'" +
                   (verb.empty() ? std::string() : ", got '" + verb + "'"));
}

}  // namespace baton_app
