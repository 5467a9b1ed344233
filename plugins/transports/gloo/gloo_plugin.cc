// The gloo transport plugin: CPU tensors over TCP through Facebook's gloo library. This file
// is the plugin's descriptor (parameters, viability); gloo_create.cc makes the transport.
#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>

#include "baton/plugin.h"
#include "baton/plugin_implementation.h"

namespace {

const baton::ParamSpec kParams[] = {
    {"interface", baton::ParamType::kString, "",
     "Network interface gloo listens on (e.g. eth0); empty: use `address`."},
    {"address", baton::ParamType::kString, "127.0.0.1",
     "Address or host name this rank listens on and announces to its peers."},
    {"timeout_s", baton::ParamType::kFloat, "0",
     "Seconds to wait for the peers while connecting; 0: the run's timeout (world.timeout_s)."},
};

// Viability is decided without the run's parameters: gloo's TCP transport must be able to
// open a device on loopback. A configured address or interface that does not work is
// reported when the transport is created.
baton::Viability viability() {
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    gloo::transport::tcp::CreateDevice(attr);
    return baton::Viability::yes();
  } catch (const std::exception& error) {
    return baton::Viability::no(std::string("gloo cannot open a TCP device on 127.0.0.1: ") +
                                error.what());
  }
}

// The tensor side (LibTorch) is libbaton_gloo_transport.so, loaded when a transport is
// made: listing this plugin costs no LibTorch.
const char kInThisLibrary = 0;

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  return baton::create_from_implementation(&kInThisLibrary, "libbaton_gloo_transport.so", params);
}

// What the object implements (transport version 2: supports_device); by (peer, tag) matching,
// a step's receives may be posted ahead of the plan.
const baton::PluginInterface kInterfaces[] = {
    baton::kTransportInterface, baton::kAllReduceInterface, baton::kShardCollectivesInterface,
    baton::kReceivesMatchByTag};

}  // namespace

BATON_PLUGIN_WITH_INTERFACES(
    baton::PluginKind::kTransport, "gloo", "1.0.0",
    "CPU tensors over TCP with gloo (any dtype; rendezvous through the run's store)", kParams,
    &viability, &create, kInterfaces)
