#include "rank_connections.h"

#include <chrono>
#include <cmath>

#include "baton/error.h"
#include "baton/log.h"
#include "baton/stores.h"
#include "baton/wait_notice.h"
#include "stopwatch.h"

namespace baton_app {
namespace {

// Seconds since `start`, to the hundredth: for log lines.
double rounded_seconds_since(std::chrono::steady_clock::time_point start) {
  return std::round(seconds_since(start) * 100) / 100;
}

}  // namespace

std::shared_ptr<baton::Store> meet_the_other_ranks(const RunSettings& settings,
                                                   const WorldInfo& world) {
  if (world.world_size == 1) return nullptr;
  const ConnectionSettings& configured = settings.connections;
  baton::RendezvousOptions rendezvous;
  rendezvous.kind = configured.rendezvous;
  rendezvous.address = world.store_address.empty() ? configured.address : world.store_address;
  rendezvous.port = world.store_port > 0 ? world.store_port : configured.port;
  rendezvous.file = configured.file;
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

ConnectedTransport connect_transport(const ConnectionSettings& settings,
                                     const baton::ConfiguredPlugins& plugins,
                                     const WorldInfo& world,
                                     const std::shared_ptr<baton::Store>& store,
                                     std::chrono::milliseconds timeout, c10::Device device) {
  if (!store) return {};
  const baton::Viability viability = plugins.transport->viability();
  if (!viability.viable) {
    throw baton::PluginError("transport '" + plugins.transport->name() +
                             "' cannot run on this machine: " + viability.reason);
  }
  // Where the ranks meet tells a transport where they are: on loopback, all on this machine
  // (UCX's net_devices: auto then listens on lo only). Plugins read it from the environment.
  const std::string address = world.store_address.empty() ? settings.address : world.store_address;
  ::setenv("BATON_WORLD_ADDRESS", address.c_str(), 1);
  // How many ranks share this machine (UCX's progress_poll_us: auto polls only with CPUs
  // to spare).
  ::setenv("BATON_LOCAL_RANKS", std::to_string(world.local_world_size).c_str(), 1);
  std::shared_ptr<baton::Transport> transport =
      plugins.transport->create_as<baton::Transport>(settings.transport_params);
  const baton::TransportInterfaces interfaces =
      baton::transport_interfaces(plugins.transport->descriptor(), *transport);
  if (interfaces.v2 != nullptr) {
    const baton::Viability moves = interfaces.v2->supports_device(device);
    if (!moves.viable) {
      throw baton::PluginError(
          "transport '" + plugins.transport->name() +
          "' cannot move this rank's tensors, which live on " + device.str() +
          " (world.device: " + c10::DeviceTypeName(device.type(), /*lower_case=*/true) +
          "): " + moves.reason + "; choose a transport that can (`baton plugins` lists them)");
    }
  }
  const auto started = std::chrono::steady_clock::now();
  {
    const baton::WaitNotice notice(
        "transport", "transport '" + plugins.transport->name() + "' to connect to its peers");
    transport->connect({world.rank, world.world_size,
                        std::make_shared<baton::PrefixStore>("transport", store), timeout, device});
  }
  BATON_LOG_INFO("transport", "'" << plugins.transport->name() << "' connected in "
                                  << rounded_seconds_since(started) << " s");
  return {transport, interfaces};
}

}  // namespace baton_app
