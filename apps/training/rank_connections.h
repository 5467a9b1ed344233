// A rank's connections to the others: the store they meet through, and the transport their
// tensors travel by. rank_pipeline.h connects them for a run; the rotation of `baton bench
// tune` once for all its candidates.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "baton/config_plugins.h"
#include "baton/store.h"
#include "baton/transport_interfaces.h"
#include "run_settings.h"
#include "world_info.h"

namespace baton_app {

// The store every rank meets through; null for a single rank, which talks to nobody.
std::shared_ptr<baton::Store> meet_the_other_ranks(const RunSettings& settings,
                                                   const WorldInfo& world);

// A connected transport and what its plugin lists beyond the transport interface's first
// version (baton/transport_interfaces.h).
struct ConnectedTransport {
  std::shared_ptr<baton::Transport> transport;  // null for a single rank
  baton::TransportInterfaces interfaces;
};

// The configured transport, connected to every other rank; none for a single rank. `device`:
// where the rank's tensors live (rank_device.h), which a GPU transport works on; a transport
// that lists version 2 of the interface and cannot move tensors there is refused before it
// connects.
ConnectedTransport connect_transport(const ConnectionSettings& settings,
                                     const baton::ConfiguredPlugins& plugins,
                                     const WorldInfo& world,
                                     const std::shared_ptr<baton::Store>& store,
                                     std::chrono::milliseconds timeout,
                                     c10::Device device = c10::Device(c10::kCPU));

}  // namespace baton_app
