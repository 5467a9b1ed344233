// `baton config check [FILE]` and `baton config defaults`.
#include <iostream>
#include <memory>

#include "baton/config.h"
#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/plugin_loader.h"
#include "commands.h"
#include "model_specs.h"
#include "run_check.h"
#include "training/config_sections.h"

namespace baton_app {
namespace {

constexpr const char* kEmbeddedDefault = "<embedded default>";

struct ConfigOptions {
  std::string file;  // empty: the embedded default
  std::vector<std::string> sets;
  bool no_env = false;
  std::vector<std::string> plugin_path;
};

int check(const ConfigOptions& options) {
  baton::ConfigOverrides overrides;
  overrides.set = options.sets;
  overrides.use_environment = !options.no_env;
  baton::Config config = !options.file.empty()
                             ? baton::load_config_file(options.file, overrides)
                             : baton::load_config_text("", kEmbeddedDefault, overrides);
  check_run_before_start(config);
  std::cout << baton::format_resolved_config(config);
  std::cout << "# OK: " << config.source() << " is valid\n";
  return 0;
}

int defaults(const ConfigOptions& options) {
  std::cout << baton::format_config_defaults();
  for (const auto& model : baton_models::model_specs()) {
    std::cout << "model.params for model '" << model.name << "': " << model.doc << "\n"
              << baton::format_param_table(model.params, model.num_params, "model.params.", "")
              << "\n";
  }
  const baton::PluginLoader loader(options.plugin_path);
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

void add_config_command(CommandLine& command_line) {
  add_app_config_sections();
  auto options = std::make_shared<ConfigOptions>();
  CLI::App& config = command_line.add_command(command_line.root(), "config",
                                              "check a run configuration, or print every option");
  config.group("Commands");
  CLI::App& check_command = command_line.add_command(
      config, "check",
      "validate a run configuration (file, environment, --set) and print it resolved, with "
      "where each value came from",
      [options] { return check(*options); });
  check_command.add_option("FILE", options->file, "the YAML to check (none: the embedded default)")
      ->type_name("YAML");
  add_repeatable_option(check_command, "--set", options->sets,
                        "override one option, after the file and the environment (repeatable)");
  check_command.add_flag("--no-env", options->no_env, "ignore BATON_<SECTION>_<KEY> variables");
  CLI::App& defaults_command = command_line.add_command(
      config, "defaults",
      "print every option with its type, default and doc, and each plugin's parameters",
      [options] { return defaults(*options); });
  add_plugin_path_option(defaults_command, options->plugin_path);
}

}  // namespace baton_app
