// The UCX transport's tensor side: makes the transport from checked parameters
// (libbaton_ucx_transport.so, loaded by the plugin file on first use).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstdlib>
#include <string>

#include "baton/machine.h"
#include "baton/plugin_implementation.h"
#include "peer_process_watch.h"
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

// net_devices: auto. Ranks that `baton launch` started, or that meet on a loopback address,
// all run here: UCX's TCP listeners stay on lo. Ranks meeting on another address listen on
// the device that holds it when this machine has it (rank 0's host), else on every device.
std::string auto_net_devices() {
  if (std::getenv("BATON_LAUNCH_RANK") != nullptr) return "lo";
  const char* world_address = std::getenv("BATON_WORLD_ADDRESS");
  if (world_address == nullptr || *world_address == '\0') return "";
  const std::string address = world_address;
  if (address.rfind("127.", 0) == 0 || address == "localhost" || address == "::1") return "lo";
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return "";
  std::string device;
  for (ifaddrs* entry = interfaces; entry != nullptr && device.empty(); entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {0};
    const auto* ipv4 = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
    if (::inet_ntop(AF_INET, &ipv4->sin_addr, text, sizeof(text)) != nullptr && address == text) {
      device = entry->ifa_name;
    }
  }
  ::freeifaddrs(interfaces);
  return device;
}

// The ranks on this machine: what the launcher said (baton's own, then torchrun's), else 1.
int local_ranks() {
  for (const char* name : {"BATON_LOCAL_RANKS", "LOCAL_WORLD_SIZE"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && std::atoi(value) > 0) return std::atoi(value);
  }
  return 1;
}

// progress_poll_us: a number, or auto. The progress thread polls beside the rank's compute:
// on a machine whose CPUs the ranks share (fewer than two a rank) every microsecond it polls
// is taken from a rank that computes (the reference MLP's step over UCX: 46 ms polling, 41
// without, on 2 ranks and 2 CPUs).
std::chrono::microseconds progress_poll(const baton::ParamValues& params) {
  const std::string& text = params.get_string("progress_poll_us");
  if (text == "auto") {
    return std::chrono::microseconds(baton::cpus_available() >= 2 * local_ranks() ? 100 : 0);
  }
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 0 || value > 10'000'000) {
    throw baton::ConfigError(
        "transport.params.progress_poll_us must be between 0 and 10000000 (10 s) or auto, got " +
        params.at("progress_poll_us").text());
  }
  return std::chrono::microseconds(value);
}

std::unique_ptr<baton::PluginObject> make_transport(const baton::ParamValues& params) {
  baton_ucx::UcxOptions options;
  options.connect_timeout = params.get_seconds("timeout_s", "transport.params.timeout_s");
  options.poll_window = progress_poll(params);
  options.wait_poll = microseconds_param(params, "wait_poll_us");
  options.detect_peer_failure = params.get_bool("peer_failure_detection");
  const std::string& devices = params.get_string("net_devices");
  if (devices == "auto") {
    options.net_devices = auto_net_devices();
  } else if (devices != "all") {
    options.net_devices = devices;
  }
  if (options.detect_peer_failure) {
    // Peers on this machine are watched through their processes (peer_process_watch.h).
    const char* set_devices = std::getenv("UCX_NET_DEVICES");
    const bool every_rank_here =
        (set_devices != nullptr ? std::string(set_devices) : options.net_devices) == "lo";
    // Without pidfds (a kernel before 5.3, a seccomp profile that refuses the call) local
    // peers cannot be watched: TCP stays, for UCX's own detection.
    options.excluded_transports =
        every_rank_here && baton_ucx::PeerProcessWatch::available() ? "cma,tcp" : "cma";
  }
  return std::make_unique<baton_ucx::UcxTransport>(options);
}

}  // namespace

BATON_PLUGIN_IMPLEMENTATION(&make_transport)
