// The UCX transport plugin: CPU (and, with a CUDA-enabled UCX, CUDA) tensors over whatever
// UCX picks — shared memory between local ranks, TCP, RDMA — with UCX_TLS and the other
// UCX_* variables honoured.
#include <cmath>
#include <string>

#include "baton/plugin.h"
#include "ucx_transport.h"
#include "worker.h"

namespace {

const baton::ParamSpec kParams[] = {
    {"timeout_s", baton::ParamType::kFloat, "0",
     "Seconds to wait for the peers while connecting; 0: the run's timeout "
     "(world.timeout_s)."},
    {"progress_poll_us", baton::ParamType::kInt, "100",
     "Microseconds the progress thread keeps polling UCX after any activity (a message, a "
     "post, a wait) before it sleeps on UCX's wake-up event. Larger: back-to-back messages "
     "see polling latency (~1 us instead of a ~20-100 us wake-up) at the cost of that much "
     "CPU after each burst; 0: sleep as soon as nothing moves. Idle ranks never poll."},
    {"wait_poll_us", baton::ParamType::kInt, "200",
     "Microseconds a waiting caller polls UCX itself before it sleeps (the progress thread "
     "stands aside meanwhile). A message that arrives within it costs polling latency and no "
     "thread wake-up; 0: never poll in wait(). Compute is never interrupted: only a rank "
     "that waits polls."},
    {"peer_failure_detection", baton::ParamType::kBool, "true",
     "Have UCX report a peer that dies (UCP_ERR_HANDLING_MODE_PEER), so operations with it "
     "fail at once instead of at their timeout. UCX 1.13's shared-memory transports cannot: "
     "with this on, ranks on one machine talk over TCP loopback (~4 us, ~7 GB/s), or, when "
     "UCX_TLS allows only shared memory, connect without detection (with a warning). Off: "
     "ranks on one machine use shared memory (~0.2 us, 8-15 GB/s), and a dead peer shows as "
     "a wait's timeout."},
};

// Viable when UCX starts here: a context and a worker with wake-up support can be created
// with the current UCX_* environment.
baton::Viability viability() {
  try {
    baton_ucx::Worker worker;
    return baton::Viability::yes();
  } catch (const std::exception& error) {
    return baton::Viability::no(error.what());
  }
}

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

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  baton_ucx::UcxOptions options;
  const double timeout_s = params.get_float("timeout_s");
  if (!(timeout_s >= 0) || !std::isfinite(timeout_s)) {
    throw baton::ConfigError("transport.params.timeout_s must be a number >= 0, got " +
                             params.at("timeout_s").text());
  }
  options.connect_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  options.poll_window = microseconds_param(params, "progress_poll_us");
  options.wait_poll = microseconds_param(params, "wait_poll_us");
  options.detect_peer_failure = params.get_bool("peer_failure_detection");
  return std::make_unique<baton_ucx::UcxTransport>(options);
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kTransport, "ucx", "1.0.0",
             "CPU tensors (CUDA with a CUDA-enabled UCX) over UCX: shared memory, TCP, RDMA; "
             "sleeps when idle",
             kParams, &viability, &create)
