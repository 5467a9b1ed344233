// The UCX transport's tensor side: makes the transport from checked parameters
// (libbaton_ucx_transport.so, loaded by the plugin file on first use).
#include <cstdlib>
#include <string>

#include "baton/plugin_implementation.h"
#include "ucx_transport.h"

namespace {

// A duration parameter in microseconds, 0 to 10 s.
std::chrono::microseconds microseconds_param(const baton::ParamValues& params,
                                             const std::string& name) {
  const std::int64_t value = params.get_int(name);
  if (value < 0 || value > 10'000'000) {
    throw baton::ConfigError("transport.params." + name +
                             " must be between 0 and 10000000 (10 s), got " +
                             params.at(name).text());
  }
  return std::chrono::microseconds(value);
}

std::unique_ptr<baton::PluginObject> make_transport(const baton::ParamValues& params) {
  baton_ucx::UcxOptions options;
  options.connect_timeout = params.get_seconds("timeout_s", "transport.params.timeout_s");
  options.poll_window = microseconds_param(params, "progress_poll_us");
  options.wait_poll = microseconds_param(params, "wait_poll_us");
  options.detect_peer_failure = params.get_bool("peer_failure_detection");
  // Ranks that `baton launch` started all run here: keep UCX's TCP listeners on loopback.
  const std::string& devices = params.get_string("net_devices");
  if (devices == "auto") {
    options.net_devices = std::getenv("BATON_LAUNCH_RANK") != nullptr ? "lo" : "";
  } else if (devices != "all") {
    options.net_devices = devices;
  }
  return std::make_unique<baton_ucx::UcxTransport>(options);
}

}  // namespace

BATON_PLUGIN_IMPLEMENTATION(&make_transport)
