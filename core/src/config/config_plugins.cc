#include "baton/config_plugins.h"

#include <filesystem>

#include "baton/error.h"
#include "baton/plan/gradient_reduction.h"
#include "config_front_door.h"

namespace baton {
namespace {

std::shared_ptr<LoadedPlugin> load_one(const Config& config, const PluginLoader& loader,
                                       const std::string& section, PluginKind kind) {
  const ParamValue& name = config.section(section).at("name");
  // Chosen when the run starts (or by `baton tune`): no plugin of that name to load.
  if (kind == PluginKind::kSchedule && schedule_chosen_at_start(config)) return nullptr;
  std::shared_ptr<LoadedPlugin> plugin;
  try {
    plugin = loader.load(kind, name.as_string());
  } catch (const PluginError& error) {
    throw PluginError(name.origin().description + ": " + section + ".name: " + error.what());
  }
  return plugin;
}

void resolve_params_of(Config& config, const std::shared_ptr<LoadedPlugin>& plugin,
                       const std::string& section) {
  if (!plugin) return;
  const PluginDescriptor& descriptor = plugin->descriptor();
  ConfigFrontDoor::set_plugin_params(
      config, section,
      resolve_params(
          config.raw_params(section), descriptor.params, descriptor.num_params,
          std::string(plugin_kind_name(descriptor.kind)) + " plugin '" + plugin->name() + "'"));
}

}  // namespace

bool schedule_chosen_at_start(const Config& config) {
  return config.section("schedule").get_string("name") == "auto";
}

PluginLoader plugin_loader_for(const Config& config) {
  // A relative folder written in the YAML file is the file's neighbour, wherever baton runs
  // from; one given with --set or the environment is relative to the working folder.
  const ParamValue& setting = config.section("plugins").at("path");
  const std::string& file = config.source();
  const bool from_file = setting.origin().description.rfind(file + ":", 0) == 0;
  std::vector<std::string> folders;
  for (const std::string& folder : setting.as_string_list()) {
    std::filesystem::path path(folder);
    if (from_file && path.is_relative()) {
      path = std::filesystem::path(file).parent_path() / path;
    }
    folders.push_back(path.lexically_normal().string());
  }
  return PluginLoader(folders);
}

ConfiguredPlugins resolve_plugins(Config& config, const PluginLoader& loader) {
  ConfiguredPlugins plugins = load_plugins(config, loader);
  resolve_params_of(config, plugins.schedule, "schedule");
  resolve_params_of(config, plugins.transport, "transport");
  return plugins;
}

ConfiguredPlugins load_plugins(const Config& config, const PluginLoader& loader) {
  ConfiguredPlugins plugins;
  plugins.schedule = load_one(config, loader, "schedule", PluginKind::kSchedule);
  plugins.transport = load_one(config, loader, "transport", PluginKind::kTransport);
  const ParamValue& replicas = config.section("world").at("data_parallel");
  if (replicas.as_int() > 1 && !declares(plugins.transport->descriptor(), kAllReduceInterface)) {
    throw ConfigError(replicas.origin().description + ": world.data_parallel is " +
                      replicas.text() + ", but transport '" + plugins.transport->name() +
                      "' cannot all-reduce the replicas' gradients (its descriptor does not "
                      "list the interface baton.all_reduce; `baton plugins` lists those that do: "
                      "gloo, ucx, nccl); use one of them, or world.data_parallel: 1");
  }
  return plugins;
}

ConfiguredPlan compile_configured_plan(const Config& config, const ConfiguredPlugins& plugins,
                                       int world_ranks) {
  const ParamValues& section = config.section("schedule");
  if (!plugins.schedule) {
    throw ConfigError(section.at("name").origin().description +
                      ": schedule.name: auto is chosen when a run starts (baton launch, baton "
                      "run) or shown by `baton tune CONFIG`; this command needs a schedule "
                      "plugin's name (docs/auto.md)");
  }
  // world.data_parallel replicas run the same plan, each on its own pipeline of ranks.
  const int replicas = static_cast<int>(config.section("world").get_int("data_parallel"));
  ConfiguredPlan configured;
  configured.data_parallel = replicas;
  configured.shape = {world_ranks / replicas, static_cast<int>(section.get_int("stages_per_rank")),
                      static_cast<int>(section.get_int("microbatches"))};
  auto schedule = plugins.schedule->create_as<Schedule>(config.plugin_params("schedule"));
  configured.plan = compile_schedule(*schedule, configured.shape, plugins.schedule->name());
  if (replicas > 1) configured.plan = with_gradient_reduction(configured.plan);
  return configured;
}

}  // namespace baton
