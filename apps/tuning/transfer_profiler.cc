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
#include "median.h"
#include "scratch_folder.h"
#include "stopwatch.h"

namespace baton_app {
namespace {

constexpr std::int64_t kSmallBytes = 64;
constexpr int kSmallRoundTrips = 50;
constexpr double kLargeFloorBytes = 64 << 10;  // below this, latency is all there is
constexpr double kLargeCeilingBytes = 64 << 20;
// The exchanges under load: a compute action's length apart, and enough of them to meet the
// spikes a loaded machine gives now and then (a post that waits out a scheduler slice), which
// a pipeline meets too.
constexpr int kLoadedExchanges = 300;
constexpr double kBusySeconds = 0.002;
// The exchanges come in blocks, the two sizes in turn, so that both meet the same moments of
// a machine whose speed swings within seconds.
constexpr int kLoadedBlocks = 6;

// The second size of the loaded fit: an eighth of the large message, at least 4 KiB.
std::int64_t loaded_small_bytes(std::int64_t large_bytes) {
  return std::max<std::int64_t>(4 << 10, large_bytes / 8);
}

// What a message costs a rank while both ranks compute (exchange_under_load): means over
// exchanges, of one rank's block, then of both ranks' (probe_pair).
struct LoadedExchange {
  double post_s = 0;  // the time isend() held its caller
  // How much longer a fixed piece of compute took with messages about: not clamped per block
  // (a block's noise may make it negative), only once both ranks are pooled (probe_pair).
  double stolen_s = 0;
  double wait_s = 0;  // the wait for the peer's message after one's own send

  // Adds `weight` times `other`: the pooling of blocks and of ranks into means.
  void add(const LoadedExchange& other, double weight) {
    post_s += weight * other.post_s;
    stolen_s += weight * other.stolen_s;
    wait_s += weight * other.wait_s;
  }
};

// One-way seconds for a small and a large message and what posting a large send and a
// receive cost, idle, on rank 0 of the pair; and the loaded exchanges at a small and the
// large size (one rank's in the rank's thread, both ranks' once probe_pair has them).
struct ProbeTimes {
  double small_s = 0;
  double large_s = 0;
  double post_s = 0;
  double recv_post_s = 0;
  LoadedExchange loaded_small;
  LoadedExchange loaded_large;
};

// How long `post` (an isend or irecv) occupies its caller; the Work goes to `work`.
template <typename Post>
double seconds_to_post(Post&& post, std::unique_ptr<baton::Work>* work) {
  const auto started = std::chrono::steady_clock::now();
  *work = post();
  return seconds_since(started);
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
  return upper_median(posts);
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
  return upper_median(posts);
}

// A fixed amount of arithmetic on one core, no memory traffic: how long it takes is how much
// of the core this thread got.
void compute(long iterations) {
  volatile double sink = 1.0;
  for (long i = 0; i < iterations; ++i) sink = sink * 1.0000001 + 1e-9;
}

// How many iterations of compute() last `seconds` on this thread now (with the peer computing
// too, since both ranks calibrate at once).
long iterations_lasting(double seconds) {
  long iterations = 10000;
  for (int round = 0; round < 6; ++round) {
    const auto started = std::chrono::steady_clock::now();
    compute(iterations);
    const double took = std::max(1e-6, seconds_since(started));
    iterations =
        std::max(1000L, static_cast<long>(static_cast<double>(iterations) * seconds / took));
  }
  return iterations;
}

// What a message costs while the ranks compute, as in a pipeline's steady state. Both ranks
// compute a fixed piece of work (about `busy_s`), then, every other time, both post the
// receive of the other's message and send their own at once (F one way, B the other). Fixed
// work, not a fixed time: the transports' I/O threads take the cores from the compute (the
// peer's message lands while this rank still computes), which only shows as that work taking
// longer than between the quiet rounds. Means, not medians: a step pays every spike.
LoadedExchange exchange_under_load(baton::Transport& transport, int me, std::int64_t bytes,
                                   int exchanges, double busy_s,
                                   std::chrono::milliseconds timeout) {
  constexpr std::uint64_t kData = 5;
  const at::Tensor outgoing = at::ones({bytes}, at::kByte);
  const at::Tensor incoming = at::zeros({bytes}, at::kByte);
  const long iterations = iterations_lasting(busy_s);
  double computing_with_messages = 0, computing_quiet = 0;
  LoadedExchange sum;
  for (int round = 0; round < 2 * exchanges; ++round) {
    const auto started = std::chrono::steady_clock::now();
    compute(iterations);
    const double computing = seconds_since(started);
    if (round % 2 == 1) {
      computing_quiet += computing;
      continue;
    }
    computing_with_messages += computing;
    auto receive = transport.irecv(incoming, 1 - me, kData);
    std::unique_ptr<baton::Work> send;
    sum.post_s += seconds_to_post([&] { return transport.isend(outgoing, 1 - me, kData); }, &send);
    const auto waiting = std::chrono::steady_clock::now();
    receive->wait(timeout);
    sum.wait_s += seconds_since(waiting);
    send->wait(timeout);
  }
  return {sum.post_s / exchanges, (computing_with_messages - computing_quiet) / exchanges,
          sum.wait_s / exchanges};
}

ProbeTimes probe_pair(const TransferSettings& settings, std::int64_t large_bytes,
                      std::chrono::milliseconds timeout) {
  const std::shared_ptr<baton::LoadedPlugin> plugin =
      settings.loader.load(baton::PluginKind::kTransport, settings.transport);
  const baton::Viability viability = plugin->viability();
  if (!viability.viable) throw baton::PluginError("cannot run here: " + viability.reason);
  const ScratchFolder scratch("baton-transfer-probe");
  auto store = std::make_shared<baton::FileStore>(scratch.path());
  // Large messages take longer per round trip: fewer of them, at least a few.
  const int large_round_trips =
      static_cast<int>(std::clamp<std::int64_t>((256 << 20) / large_bytes, 4, 20));
  auto rank = [&](int me) {
    auto transport = plugin->create_as<baton::Transport>(settings.params);
    transport->connect({me, 2, store, timeout});
    ProbeTimes times;
    times.small_s = baton::probe_one_way_seconds(*transport, 1 - me, me == 0, kSmallBytes,
                                                 kSmallRoundTrips, timeout);
    times.large_s = baton::probe_one_way_seconds(*transport, 1 - me, me == 0, large_bytes,
                                                 large_round_trips, timeout);
    times.post_s = time_send_posts(*transport, me, large_bytes, large_round_trips, timeout);
    times.recv_post_s = time_receive_posts(*transport, me, large_bytes, large_round_trips, timeout);
    // Equal blocks: the mean of their means is the mean of all exchanges.
    const int per_block = kLoadedExchanges / kLoadedBlocks;
    LoadedExchange small_sum, large_sum;
    for (int block = 0; block < kLoadedBlocks; ++block) {
      for (int turn = 0; turn < 2; ++turn) {
        const bool small = (turn == 0) == (block % 2 == 0);
        const LoadedExchange loaded = exchange_under_load(
            *transport, me, small ? loaded_small_bytes(large_bytes) : large_bytes, per_block,
            kBusySeconds, timeout);
        (small ? small_sum : large_sum).add(loaded, 1.0 / kLoadedBlocks);
      }
    }
    times.loaded_small = small_sum;
    times.loaded_large = large_sum;
    return times;
  };
  auto peer = std::async(std::launch::async, rank, 1);
  ProbeTimes times;
  ProbeTimes peer_times;
  std::exception_ptr failure;
  try {
    times = rank(0);
  } catch (...) {
    failure = std::current_exception();
  }
  try {
    peer_times = peer.get();  // bounded: every wait in it has the timeout
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  if (failure) std::rethrow_exception(failure);
  // Under load the two ranks of one probe differ by up to 2x (one meets the spikes the other
  // escapes); both ranks' exchanges count.
  const auto mean_of_both = [](const LoadedExchange& mine, const LoadedExchange& theirs) {
    LoadedExchange mean;
    mean.add(mine, 0.5);
    mean.add(theirs, 0.5);
    return mean;
  };
  times.loaded_small = mean_of_both(times.loaded_small, peer_times.loaded_small);
  times.loaded_large = mean_of_both(times.loaded_large, peer_times.loaded_large);
  for (LoadedExchange* loaded : {&times.loaded_small, &times.loaded_large}) {
    loaded->stolen_s = std::max(0.0, loaded->stolen_s);
  }
  return times;
}

}  // namespace

TransferSettings read_transfer_settings(const baton::Config& config) {
  TransferSettings settings;
  settings.loader = baton::plugin_loader_for(config);
  settings.transport = config.section("transport").get_string("name");
  settings.params = config.plugin_params("transport");
  return settings;
}

TransferProfile profile_transfers(const TransferSettings& settings, double largest_message_bytes,
                                  std::chrono::milliseconds timeout) {
  const std::string& name = settings.transport;
  const auto large_bytes = static_cast<std::int64_t>(
      std::clamp(largest_message_bytes, kLargeFloorBytes, kLargeCeilingBytes));
  TransferProfile profile;
  try {
    const ProbeTimes times = probe_pair(settings, large_bytes, timeout);
    const double idle_per_byte = std::max(
        0.0, (times.large_s - times.small_s) / static_cast<double>(large_bytes - kSmallBytes));
    // The simulation charges what a message costs in a pipeline, where the ranks compute: a
    // send occupies its sender for what posting it costs under load plus the compute the
    // message takes from the ranks (clamped at zero once pooled), a line through the two
    // sizes, charged at each message's own size: the large point no lower than its idle
    // posting, the intercept no lower than zero. The wait for the large message under load,
    // less its bytes at the idle rate, is the latency, no lower than the idle one way. That
    // wait is mostly how far the two ranks' compute drifted apart (each rank calibrates its
    // own work, and the scheduler's slices do the rest), not the message's flight (0.25-0.6
    // ms here); it ranks schedules better than the flight does, standing in for what a
    // pipeline pays at each dependency between ranks that the simulation leaves out
    // (docs/auto.md).
    const std::int64_t small_bytes = loaded_small_bytes(large_bytes);
    const double small_cost = times.loaded_small.post_s + times.loaded_small.stolen_s;
    const double large_cost =
        std::max(times.post_s, times.loaded_large.post_s + times.loaded_large.stolen_s);
    profile.seconds_per_byte = idle_per_byte;
    profile.latency_s =
        std::max(times.small_s,
                 times.loaded_large.wait_s - static_cast<double>(large_bytes) * idle_per_byte);
    profile.send_overhead_per_byte =
        std::max(0.0, (large_cost - small_cost) / static_cast<double>(large_bytes - small_bytes));
    profile.send_overhead_s = std::max(
        0.0, large_cost - profile.send_overhead_per_byte * static_cast<double>(large_bytes));
    profile.recv_overhead_s = times.recv_post_s;
    std::ostringstream source;
    source << "measured: " << name
           << " between two ranks on this machine (idle, one way: " << kSmallBytes << " B "
           << times.small_s * 1e6 << " us, " << large_bytes << " B " << times.large_s * 1e6
           << " us; posting a send " << times.post_s * 1e6 << " us, a receive "
           << times.recv_post_s * 1e6 << " us; while both ranks compute, " << small_bytes
           << " B and " << large_bytes << " B: posting a send " << times.loaded_small.post_s * 1e6
           << " and " << times.loaded_large.post_s * 1e6 << " us, the compute a message takes "
           << times.loaded_small.stolen_s * 1e6 << " and " << times.loaded_large.stolen_s * 1e6
           << " us, the message's wait " << times.loaded_small.wait_s * 1e6 << " and "
           << times.loaded_large.wait_s * 1e6 << " us)";
    profile.source = source.str();
  } catch (const std::exception& error) {
    profile.source = "not measured (" + name + ": " + error.what() +
                     "); transfers cost nothing in the simulation";
    std::cerr << "profile: transfers " << profile.source << "\n";
  }
  return profile;
}

}  // namespace baton_app
