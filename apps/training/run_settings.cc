#include "run_settings.h"

namespace baton_app {

RunSettings read_run_settings(const baton::Config& config) {
  const baton::ParamValues& run = config.section("run");
  RunSettings settings;
  settings.name = run.get_string("name");
  settings.run_dir = run.get_string("output_dir") + "/" + settings.name;
  settings.steps = static_cast<int>(run.get_int("steps"));
  settings.seed = static_cast<std::uint64_t>(run.get_int("seed"));
  settings.timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(config.section("world").get_float("timeout_s") * 1000));
  settings.heartbeat = std::chrono::milliseconds(
      static_cast<std::int64_t>(config.section("world").get_float("heartbeat_s") * 1000));

  settings.progress.log_every = static_cast<int>(run.get_int("log_every"));
  settings.progress.run_dir = settings.run_dir;

  const baton::ParamValues& trace = config.section("trace");
  settings.trace.steps = static_cast<int>(trace.get_int("steps"));
  settings.trace.enabled = trace.get_bool("enabled") && settings.trace.steps >= 1;
  settings.trace.path = trace.get_string("path");
  if (settings.trace.path.empty()) settings.trace.path = settings.run_dir + "/trace.json";

  const baton::ParamValues& checkpoint = config.section("checkpoint");
  settings.checkpoint.dir = checkpoint.get_string("dir");
  if (settings.checkpoint.dir.empty()) settings.checkpoint.dir = settings.run_dir + "/checkpoints";
  settings.checkpoint.every = static_cast<int>(checkpoint.get_int("every"));
  settings.checkpoint.enabled = checkpoint.get_bool("enabled");
  settings.checkpoint.optimizer = config.section("optimizer").get_string("name");
  return settings;
}

}  // namespace baton_app
