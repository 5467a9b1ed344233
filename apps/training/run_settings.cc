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

  const baton::ParamValues& world = config.section("world");
  settings.world = read_world_settings(config);

  settings.connections.rendezvous = world.get_string("rendezvous");
  settings.connections.address = world.get_string("address");
  settings.connections.port = static_cast<int>(world.get_int("port"));
  settings.connections.file = world.get_string("file");
  settings.connections.transport_params = config.plugin_params("transport");

  settings.model = baton_models::read_model_settings(config);
  settings.data = baton_models::read_data_settings(config);
  settings.stages = read_stage_settings(config);
  settings.optimizer = read_optimizer_settings(config);

  const baton::ParamValues& eval = config.section("eval");
  settings.eval.every = static_cast<int>(eval.get_int("every"));
  settings.eval.batches = static_cast<int>(eval.get_int("batches"));
  settings.eval.inputs = baton::read_setting<std::vector<std::string>>(eval, "inputs");
  settings.eval.targets = baton::read_setting<std::string>(eval, "targets");
  settings.eval.tokens = baton::read_setting<std::string>(eval, "tokens");
  settings.precision = read_precision_settings(config);
  return settings;
}

}  // namespace baton_app
