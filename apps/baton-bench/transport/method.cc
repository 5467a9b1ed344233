#include "method.h"

#include <algorithm>
#include <chrono>

#include "stopwatch.h"

namespace baton_app {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kBytesPerRound = std::size_t{256} << 20;

}  // namespace

SizePlan plan_size(std::size_t bytes, int requested) {
  const auto per_round = static_cast<long long>(kBytesPerRound / std::max<std::size_t>(bytes, 1));
  SizePlan plan;
  plan.iterations =
      requested > 0 ? requested : static_cast<int>(std::clamp(per_round, 10LL, 1000LL));
  plan.warmup = std::max(2, plan.iterations / 10);
  // Enough in flight to keep the connection busy while completions are handled, without
  // holding more than ~256 MiB of receive buffers.
  plan.window = static_cast<int>(std::clamp(per_round, 2LL, 8LL));
  return plan;
}

std::vector<double> measure_round_trips(BenchChannel& channel, int rank, int round_trips) {
  std::vector<double> times;
  if (rank == 1) {
    channel.start_recv(0);
    channel.send_token();  // rank 0 starts its clock only once this receive is posted
    for (int i = 0; i < round_trips; ++i) {
      channel.wait_recv(0);
      if (i + 1 < round_trips) channel.start_recv(0);
      channel.start_send(0);
      channel.wait_send(0);
    }
    return times;
  }
  times.reserve(static_cast<std::size_t>(round_trips));
  channel.recv_token();
  for (int i = 0; i < round_trips; ++i) {
    const Clock::time_point start = Clock::now();
    channel.start_recv(0);
    channel.start_send(0);
    channel.wait_send(0);
    channel.wait_recv(0);
    times.push_back(seconds_since(start));
  }
  return times;
}

double measure_stream(BenchChannel& channel, int rank, int messages, int window) {
  if (rank == 1) {
    for (int slot = 0; slot < std::min(window, messages); ++slot) channel.start_recv(slot);
    channel.send_token();
    for (int i = 0; i < messages; ++i) {
      const int slot = i % window;
      channel.wait_recv(slot);
      if (i + window < messages) channel.start_recv(slot);
    }
    channel.send_token();
    return 0;
  }
  channel.recv_token();
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < messages; ++i) {
    const int slot = i % window;
    if (i >= window) channel.wait_send(slot);
    channel.start_send(slot);
  }
  for (int i = std::max(0, messages - window); i < messages; ++i) channel.wait_send(i % window);
  channel.recv_token();
  return seconds_since(start);
}

}  // namespace baton_app
