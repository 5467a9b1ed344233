#include "transfer_profiler.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/runtime/transfer_probe.h"
#include "baton/stores.h"
#include "baton/transport.h"
#include "scratch_folder.h"

namespace baton_app {
namespace {

constexpr std::int64_t kSmallBytes = 64;
constexpr int kSmallRoundTrips = 50;
constexpr double kLargeFloorBytes = 64 << 10;  // below this, latency is all there is
constexpr double kLargeCeilingBytes = 64 << 20;
// The exchanges under load: a compute action's length apart, enough of them to meet spikes.
constexpr int kLoadedExchanges = 200;
constexpr double kBusySeconds = 0.002;

// One-way seconds for a small and a large message, and what posting a large send costs
// its sender, on rank 0 of the pair.
struct ProbeTimes {
  double small_s = 0;
  double large_s = 0;
  double post_s = 0;
  double recv_post_s = 0;
  double loaded_post_s = 0;  // exchange_under_load
  double loaded_wait_s = 0;
};

// How long `post` (an isend or irecv) occupies its caller; the Work goes to `work`.
template <typename Post>
double seconds_to_post(Post&& post, std::unique_ptr<baton::Work>* work) {
  const auto started = std::chrono::steady_clock::now();
  *work = post();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The CPU time isend() of `bytes` takes on rank 0 when the receive is already posted, as in
// a pipeline (receives are posted at the start of a step): the median of `sends`.
double time_send_posts(baton::Transport& transport, int me, std::int64_t bytes, int sends,
                       std::chrono::milliseconds timeout) {
  constexpr std::uint64_t kData = 1, kReady = 2;
  const at::Tensor data = at::ones({bytes}, at::kByte);
  const at::Tensor ready = at::zeros({1}, at::kByte);
  if (me == 1) {
    auto receive = transport.irecv(data, 0, kData);
    for (int i = 0; i < sends; ++i) {
      transport.isend(ready, 0, kReady)->wait(timeout);  // the receive for send i is posted
      receive->wait(timeout);
      if (i + 1 < sends) receive = transport.irecv(data, 0, kData);
    }
    return 0;
  }
  std::vector<double> posts;
  for (int i = 0; i < sends; ++i) {
    transport.irecv(ready, 1, kReady)->wait(timeout);
    std::unique_ptr<baton::Work> send;
    posts.push_back(seconds_to_post([&] { return transport.isend(data, 1, kData); }, &send));
    send->wait(timeout);
  }
  return median(posts);
}

// The CPU time irecv() of `bytes` takes on rank 0 before its send is posted, as the runtime
// posts a step's receives together ahead of their data: the median of `receives`.
double time_receive_posts(baton::Transport& transport, int me, std::int64_t bytes, int receives,
                          std::chrono::milliseconds timeout) {
  constexpr std::uint64_t kData = 3, kPosted = 4;
  const at::Tensor data = at::ones({bytes}, at::kByte);
  const at::Tensor posted = at::zeros({1}, at::kByte);
  if (me == 1) {
    for (int i = 0; i < receives; ++i) {
      transport.irecv(posted, 0, kPosted)->wait(timeout);  // receive i is posted: send it
      transport.isend(data, 0, kData)->wait(timeout);
    }
    return 0;
  }
  std::vector<double> posts;
  for (int i = 0; i < receives; ++i) {
    std::unique_ptr<baton::Work> receive;
    posts.push_back(seconds_to_post([&] { return transport.irecv(data, 1, kData); }, &receive));
    transport.isend(posted, 1, kPosted)->wait(timeout);
    receive->wait(timeout);
  }
  return median(posts);
}

// Keeps this thread's core busy for `seconds`, as a rank's compute does.
void keep_busy(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  volatile double sink = 1.0;
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 1000; ++i) sink = sink * 1.0000001 + 1e-9;
  }
}

struct LoadedExchange {
  double post_s = 0;  // the mean time isend() held its caller
  double wait_s = 0;  // the mean wait for the peer's message after one's own send
};

// What a message costs while the ranks compute, as in a pipeline's steady state: both ranks
// busy on a core each for `busy_s`, then both post the receive of the other's message and send
// their own at once (F one way, B the other). The sender's gloo or UCX threads and the
// receiver's then compete with the compute of both ranks for the cores; on an idle machine
// they do not, and there posting a send costs a fraction of what it costs here. Means, not
// medians: a step pays every spike.
LoadedExchange exchange_under_load(baton::Transport& transport, int me, std::int64_t bytes,
                                   int exchanges, double busy_s,
                                   std::chrono::milliseconds timeout) {
  constexpr std::uint64_t kData = 5;
  const at::Tensor outgoing = at::ones({bytes}, at::kByte);
  const at::Tensor incoming = at::zeros({bytes}, at::kByte);
  LoadedExchange sum;
  for (int i = 0; i < exchanges; ++i) {
    keep_busy(busy_s);
    auto receive = transport.irecv(incoming, 1 - me, kData);
    std::unique_ptr<baton::Work> send;
    sum.post_s += seconds_to_post([&] { return transport.isend(outgoing, 1 - me, kData); }, &send);
    const auto waiting = std::chrono::steady_clock::now();
    receive->wait(timeout);
    sum.wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count();
    send->wait(timeout);
  }
  return {sum.post_s / exchanges, sum.wait_s / exchanges};
}

ProbeTimes probe_pair(baton::Config& config, std::int64_t large_bytes,
                      std::chrono::milliseconds timeout) {
  const baton::ConfiguredPlugins plugins =
      baton::resolve_plugins(config, baton::plugin_loader_for(config));
  const baton::Viability viability = plugins.transport->viability();
  if (!viability.viable) throw baton::PluginError("cannot run here: " + viability.reason);
  const ScratchFolder scratch("baton-transfer-probe");
  auto store = std::make_shared<baton::FileStore>(scratch.path());
  // Large messages take longer per round trip: fewer of them, at least a few.
  const int large_round_trips =
      static_cast<int>(std::clamp<std::int64_t>((256 << 20) / large_bytes, 4, 20));
  auto rank = [&](int me) {
    auto transport =
        plugins.transport->create_shared<baton::Transport>(config.plugin_params("transport"));
    transport->connect({me, 2, store, timeout});
    ProbeTimes times;
    times.small_s = baton::probe_one_way_seconds(*transport, 1 - me, me == 0, kSmallBytes,
                                                 kSmallRoundTrips, timeout);
    times.large_s = baton::probe_one_way_seconds(*transport, 1 - me, me == 0, large_bytes,
                                                 large_round_trips, timeout);
    times.post_s = time_send_posts(*transport, me, large_bytes, large_round_trips, timeout);
    times.recv_post_s = time_receive_posts(*transport, me, large_bytes, large_round_trips, timeout);
    const LoadedExchange loaded =
        exchange_under_load(*transport, me, large_bytes, kLoadedExchanges, kBusySeconds, timeout);
    times.loaded_post_s = loaded.post_s;
    times.loaded_wait_s = loaded.wait_s;
    return times;
  };
  auto peer = std::async(std::launch::async, rank, 1);
  ProbeTimes times;
  std::exception_ptr failure;
  try {
    times = rank(0);
  } catch (...) {
    failure = std::current_exception();
  }
  try {
    peer.get();  // bounded: every wait in it has the timeout
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  if (failure) std::rethrow_exception(failure);
  return times;
}

}  // namespace

TransferProfile profile_transfers(baton::Config& config, double largest_message_bytes,
                                  std::chrono::milliseconds timeout) {
  const std::string name = config.section("transport").get_string("name");
  const auto large_bytes = static_cast<std::int64_t>(
      std::clamp(largest_message_bytes, kLargeFloorBytes, kLargeCeilingBytes));
  TransferProfile profile;
  try {
    const ProbeTimes times = probe_pair(config, large_bytes, timeout);
    const double idle_per_byte = std::max(
        0.0, (times.large_s - times.small_s) / static_cast<double>(large_bytes - kSmallBytes));
    // The simulation charges what a message costs in a pipeline, where the ranks compute:
    // the wait for a message under load, less its bytes at the idle rate, is its latency;
    // posting a send costs what it costs under load. Neither below its idle figure.
    profile.seconds_per_byte = idle_per_byte;
    profile.latency_s = std::max(
        times.small_s, times.loaded_wait_s - static_cast<double>(large_bytes) * idle_per_byte);
    profile.send_overhead_s = std::max(times.post_s, times.loaded_post_s);
    profile.recv_overhead_s = times.recv_post_s;
    std::ostringstream source;
    source << "measured: " << name
           << " between two ranks on this machine (idle, one way: " << kSmallBytes << " B "
           << times.small_s * 1e6 << " us, " << large_bytes << " B " << times.large_s * 1e6
           << " us; posting a send " << times.post_s * 1e6 << " us, a receive "
           << times.recv_post_s * 1e6 << " us; while both ranks compute: posting a send "
           << times.loaded_post_s * 1e6 << " us, a " << large_bytes << " B message's wait "
           << times.loaded_wait_s * 1e6 << " us)";
    profile.source = source.str();
  } catch (const std::exception& error) {
    profile.source = "not measured (" + name + ": " + error.what() +
                     "); transfers cost nothing in the simulation";
    std::cerr << "profile: transfers " << profile.source << "\n";
  }
  return profile;
}

}  // namespace baton_app
