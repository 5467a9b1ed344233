// The gloo transport plugin: CPU tensors over TCP through Facebook's gloo library.
#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>

#include <cmath>

#include "baton/plugin.h"
#include "gloo_transport.h"

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

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  baton_gloo::GlooOptions options;
  options.interface = params.get_string("interface");
  options.address = params.get_string("address");
  const double timeout_s = params.get_float("timeout_s");
  if (!(timeout_s >= 0) || !std::isfinite(timeout_s)) {
    throw baton::ConfigError("transport.params.timeout_s must be a number >= 0, got " +
                             params.at("timeout_s").text());
  }
  options.connect_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  if (options.interface.empty() && options.address.empty()) {
    throw baton::ConfigError(
        "transport.params: the gloo transport needs an address or an "
        "interface");
  }
  return std::make_unique<baton_gloo::GlooTransport>(options);
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kTransport, "gloo", "1.0.0",
             "CPU tensors over TCP with gloo (any dtype; rendezvous through the run's store)",
             kParams, &viability, &create)
