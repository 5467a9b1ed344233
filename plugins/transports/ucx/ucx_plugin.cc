// The UCX transport plugin: CPU (and, with a CUDA-enabled UCX, CUDA) tensors over whatever
// UCX picks — shared memory between local ranks, TCP, RDMA — with UCX_TLS and the other
// UCX_* variables honoured. This file is the plugin's descriptor (parameters, viability);
// ucx_create.cc makes the transport.
#include <string>

#include "baton/plugin.h"
#include "baton/plugin_implementation.h"
#include "worker.h"

namespace {

const baton::ParamSpec kParams[] = {
    {"timeout_s", baton::ParamType::kFloat, "0",
     "Seconds to wait for the peers while connecting; 0: the run's timeout "
     "(world.timeout_s)."},
    {"progress_poll_us", baton::ParamType::kString, "auto",
     "Microseconds (0 to 10000000) the progress thread keeps polling UCX after any activity "
     "(a message, a post, a wait) before it sleeps on UCX's wake-up event. Larger: "
     "back-to-back messages see polling latency (~1 us instead of a ~20-100 us wake-up) at "
     "the cost of that much CPU after each burst, taken from the rank's compute when the "
     "CPUs are shared; 0: sleep as soon as nothing moves. auto: 100 when this machine has at "
     "least two CPUs per local rank (one computes, one polls), else 0. Idle ranks never "
     "poll."},
    {"wait_poll_us", baton::ParamType::kInt, "200",
     "Microseconds a waiting caller polls UCX itself before it sleeps (the progress thread "
     "stands aside meanwhile). A message that arrives within it costs polling latency and no "
     "thread wake-up; 0: never poll in wait(). Compute is never interrupted: only a rank "
     "that waits polls."},
    {"net_devices", baton::ParamType::kString, "auto",
     "Network devices UCX may use, and so listen on (UCX_NET_DEVICES, which wins when set): "
     "a UCX device list such as lo, eth0 or mlx5_0:1; all: every device; auto: lo when every "
     "rank runs on this machine (started by baton launch, or meeting on a loopback "
     "world.address), the device that holds world.address when this machine has it, else "
     "every device."},
    {"peer_failure_detection", baton::ParamType::kBool, "true",
     "A peer that dies fails the operations with it at once instead of at their timeout. A "
     "peer on this machine is watched through its process (a pidfd), so ranks here keep "
     "shared memory (posix, sysv; ~1 us, ~8 GB/s at 16 MiB); CMA is left out (UCX 1.13 ends "
     "the process when a peer dies mid-copy), and so is TCP when every rank runs here "
     "(net_devices resolves to lo). Any other peer through UCX's error handling "
     "(UCP_ERR_HANDLING_MODE_PEER, TCP or InfiniBand). UCX_TLS, when set, wins. Off: UCX's "
     "own choice (CMA included), and a dead peer shows as a wait's timeout."},
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

// The tensor side (LibTorch) is libbaton_ucx_transport.so, loaded when a transport is
// made: listing this plugin costs no LibTorch.
const char kInThisLibrary = 0;

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  return baton::create_from_implementation(&kInThisLibrary, "libbaton_ucx_transport.so", params);
}

// What the object implements (transport version 2: supports_device); by (peer, tag) matching,
// a step's receives may be posted ahead of the plan.
const baton::PluginInterface kInterfaces[] = {
    baton::kTransportInterface, baton::kAllReduceInterface, baton::kShardCollectivesInterface,
    baton::kReceivesMatchByTag};

}  // namespace

BATON_PLUGIN_WITH_INTERFACES(
    baton::PluginKind::kTransport, "ucx", "1.0.0",
    "CPU tensors (CUDA with a CUDA-enabled UCX) over UCX: shared memory, TCP, RDMA; "
    "sleeps when idle",
    kParams, &viability, &create, kInterfaces)
