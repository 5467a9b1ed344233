#include "rank_setup.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "baton/error.h"
#include "baton/log.h"
#include "baton/stores.h"
#include "baton/unit_chain.h"
#include "baton/validator.h"
#include "baton/wait_notice.h"
#include "stage_cuts.h"
#include "stopwatch.h"

namespace baton_app {
namespace {

// Seconds since `start`, to the hundredth: for log lines.
double rounded_seconds_since(std::chrono::steady_clock::time_point start) {
  return std::round(seconds_since(start) * 100) / 100;
}

}  // namespace

void check_world_size(const baton::Config& config, const WorldInfo& world) {
  const baton::ParamValue& ranks = config.section("world").at("ranks");
  if (world.launcher != "none" && ranks.as_int() != world.world_size) {
    throw baton::ConfigError(ranks.origin().description + ": world.ranks is " + ranks.text() +
                             " but the " + world.launcher + " launcher started " +
                             std::to_string(world.world_size) +
                             " ranks; set world.ranks to match (or --set world.ranks=" +
                             std::to_string(world.world_size) + ")");
  }
}

std::vector<std::shared_ptr<baton::Validator>> make_validators(const baton::Config& config,
                                                               const baton::PluginLoader& loader) {
  std::vector<std::shared_ptr<baton::Validator>> chain;
  const baton::ParamValue& names = config.section("validation").at("validators");
  for (const auto& name : names.as_string_list()) {
    if (name == "off") continue;
    if (auto builtin = baton::make_builtin_validator(name)) {
      chain.push_back(std::move(builtin));
      continue;
    }
    std::shared_ptr<baton::LoadedPlugin> plugin;
    try {
      plugin = loader.load(baton::PluginKind::kValidator, name);
    } catch (const baton::PluginError& error) {
      throw baton::ConfigError(names.origin().description + ": validation.validators: '" + name +
                               "' is neither built in (shape_dtype, strict, finite, off) nor a "
                               "validator plugin: " +
                               error.what());
    }
    chain.push_back(plugin->create_shared<baton::Validator>(baton::ParamValues()));
  }
  return chain;
}

void set_up_logging(const baton::Config& config, const WorldInfo& world) {
  baton::set_log_prefix("rank " + std::to_string(world.rank));
  baton::LogLevel level;
  if (baton::parse_log_level(config.section("run").get_string("log_level"), &level)) {
    baton::set_log_level(level);
  }
}

std::shared_ptr<baton::Store> meet_the_other_ranks(const baton::Config& config,
                                                   const WorldInfo& world,
                                                   const RunSettings& settings) {
  if (world.world_size == 1) return nullptr;
  const baton::ParamValues& w = config.section("world");
  baton::RendezvousOptions rendezvous;
  rendezvous.kind = w.get_string("rendezvous");
  rendezvous.address = world.store_address.empty() ? w.get_string("address") : world.store_address;
  rendezvous.port = world.store_port > 0 ? world.store_port : static_cast<int>(w.get_int("port"));
  rendezvous.file = w.get_string("file");
  rendezvous.rank = world.rank;
  rendezvous.world_size = world.world_size;
  rendezvous.timeout = settings.timeout;
  rendezvous.run_id = world.run_id.empty() ? settings.name : world.run_id;
  rendezvous.rank0_hosts = !world.store_hosted_by_launcher;
  rendezvous.token = world.store_token;
  const std::string where =
      rendezvous.kind == "file"
          ? "the file store" + (rendezvous.file.empty() ? std::string() : " " + rendezvous.file)
          : "the tcp store at " + rendezvous.address + ":" + std::to_string(rendezvous.port);
  const auto started = std::chrono::steady_clock::now();
  std::shared_ptr<baton::Store> store;
  {
    const baton::WaitNotice notice(
        "rendezvous",
        "the other " + std::to_string(world.world_size - 1) + " rank(s) through " + where);
    store = baton::make_rendezvous_store(rendezvous);
    // Every rank is here, or the ones that are not are named (a file store's folder may
    // outlive a run, so its counts prove nothing).
    if (rendezvous.kind == "tcp") {
      baton::wait_for_every_rank(*store, world.rank, world.world_size, settings.timeout, where);
    }
  }
  BATON_LOG_INFO("rendezvous", "met through " << where << " (" << world.world_size
                                              << " ranks, launcher " << world.launcher << ") in "
                                              << rounded_seconds_since(started) << " s");
  return store;
}

std::vector<baton::TiedParameter> find_tied_parameters(const baton::UnitChain& chain,
                                                       const std::vector<int>& bounds) {
  std::vector<baton::TiedParameter> groups;
  std::map<const void*, std::size_t> group_of;  // tensor -> its group, in order of appearance
  for (std::size_t s = 0; s + 1 < bounds.size(); ++s) {
    for (int unit = bounds[s]; unit < bounds[s + 1]; ++unit) {
      for (const auto& [name, tensor] : chain.unit_parameters(unit)) {
        const auto [found, added] = group_of.emplace(tensor.unsafeGetTensorImpl(), groups.size());
        if (added) groups.emplace_back();
        groups[found->second].names.push_back(name);
        groups[found->second].stages.push_back(static_cast<int>(s));
      }
    }
  }
  std::vector<baton::TiedParameter> ties;
  for (auto& group : groups) {
    if (group.names.size() > 1) ties.push_back(std::move(group));
  }
  return ties;
}

LocalStages cut_into_stages(const baton::Config& config, baton_models::BuiltModel& model,
                            const baton::ConfiguredPlan& configured, const WorldInfo& world,
                            const std::shared_ptr<baton::Store>& store, const RunSettings& settings,
                            const std::vector<at::Tensor>& first_microbatch, bool resume) {
  const baton::ScheduleShape& shape = configured.shape;
  StageCutContext context;
  context.rank = world.rank;
  context.store = store;
  context.timeout = settings.timeout;
  context.run_dir = settings.run_dir;
  context.resume = resume;
  LocalStages local;
  if (model.stage_files) {
    // One file per stage, as the author split it (config check compared the counts).
    if (model.chain->num_units() != shape.num_stages()) {
      throw baton::ConfigError("model.stages lists " + std::to_string(model.chain->num_units()) +
                               " stage files but the plan has " +
                               std::to_string(shape.num_stages()) + " stages");
    }
    for (int s = 0; s <= shape.num_stages(); ++s) local.bounds.push_back(s);
  } else {
    local.bounds = resolve_stage_boundaries(config, *model.chain, shape.num_stages(),
                                            first_microbatch, context);
  }
  for (int s = 0; s < shape.num_stages(); ++s) {
    const int first = local.bounds[s];
    const int last = local.bounds[s + 1] - 1;
    local.stage_names.push_back(model.chain->unit_name(first) +
                                (last > first ? " .. " + model.chain->unit_name(last) : ""));
  }
  local.ties = find_tied_parameters(*model.chain, local.bounds);
  const baton::Plan& plan = configured.plan.lowered;
  // A tensor two local stages share (a tie on this rank) is one parameter to the optimizer,
  // though it keeps both names.
  std::set<const void*> seen;
  for (int s = 0; s < shape.num_stages(); ++s) {
    if (plan.stage_to_rank[s] != world.pipeline_rank) continue;
    local.stages.push_back(
        baton::make_chain_stage(model.chain, s, local.bounds[s], local.bounds[s + 1]));
    for (const auto& named : local.stages.back()->named_parameters()) {
      if (seen.insert(named.second.unsafeGetTensorImpl()).second) {
        local.params.push_back(named.second);
      }
      local.named_params.push_back(named);
    }
    for (auto& named : local.stages.back()->named_buffers()) {
      local.named_buffers.push_back(std::move(named));
    }
  }
  return local;
}

std::shared_ptr<baton::Transport> connect_transport(const baton::Config& config,
                                                    const baton::ConfiguredPlugins& plugins,
                                                    const WorldInfo& world,
                                                    const std::shared_ptr<baton::Store>& store,
                                                    std::chrono::milliseconds timeout,
                                                    c10::Device device) {
  if (!store) return nullptr;
  const baton::Viability viability = plugins.transport->viability();
  if (!viability.viable) {
    throw baton::PluginError("transport '" + plugins.transport->name() +
                             "' cannot run on this machine: " + viability.reason);
  }
  // Where the ranks meet tells a transport where they are: on loopback, all on this machine
  // (UCX's net_devices: auto then listens on lo only). Plugins read it from the environment.
  const std::string address = world.store_address.empty()
                                  ? config.section("world").get_string("address")
                                  : world.store_address;
  ::setenv("BATON_WORLD_ADDRESS", address.c_str(), 1);
  // How many ranks share this machine (UCX's progress_poll_us: auto polls only with CPUs
  // to spare).
  ::setenv("BATON_LOCAL_RANKS", std::to_string(world.local_world_size).c_str(), 1);
  auto transport =
      plugins.transport->create_shared<baton::Transport>(config.plugin_params("transport"));
  const auto started = std::chrono::steady_clock::now();
  {
    const baton::WaitNotice notice(
        "transport", "transport '" + plugins.transport->name() + "' to connect to its peers");
    transport->connect({world.rank, world.world_size,
                        std::make_shared<baton::PrefixStore>("transport", store), timeout, device});
  }
  BATON_LOG_INFO("transport", "'" << plugins.transport->name() << "' connected in "
                                  << rounded_seconds_since(started) << " s");
  return transport;
}

}  // namespace baton_app
