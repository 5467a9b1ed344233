#include "run_options.h"

namespace baton_app {

void add_config_options(CLI::App& command, RunOptions& options) {
  command
      .add_option("CONFIG", options.config,
                  "the run's YAML (none: the embedded default, GPT on the shipped text)")
      ->type_name("YAML");
  add_repeatable_option(command, "--set", options.sets,
                        "override one option, after the file and the environment (repeatable)");
  command.add_flag("--no-env", options.no_env, "ignore BATON_<SECTION>_<KEY> variables");
}

void add_run_options(CLI::App& command, RunOptions& options) {
  add_config_options(command, options);
  command
      .add_option("--dump-dir", options.dump_dir,
                  "write each rank's dump here: rank<r>.pt at the end (initial parameters, first "
                  "gradients, losses, final parameters), rank<r>.error on a failure (the error "
                  "with the plan)")
      ->type_name("DIR");
  command.add_flag("--resume", options.resume,
                   "continue from the newest complete checkpoint in the run's folder");
  command.add_flag("--overwrite", options.overwrite,
                   "start afresh although the run's folder holds an earlier run's checkpoints: "
                   "that run is moved aside to <folder>.replaced-<time>");
}

baton::Config load_run_config(const RunOptions& options) {
  baton::ConfigOverrides overrides;
  overrides.set = options.sets;
  overrides.use_environment = !options.no_env;
  return options.config.empty() ? baton::load_config_text("", "<embedded default>", overrides)
                                : baton::load_config_file(options.config, overrides);
}

}  // namespace baton_app
