#include "baton/runtime/transfer_probe.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "comm_tags.h"

namespace baton {

double probe_one_way_seconds(Transport& transport, int peer, bool initiator, std::int64_t bytes,
                             int round_trips, std::chrono::milliseconds timeout) {
  const std::int64_t elements = std::max<std::int64_t>(1, bytes);
  const at::Tensor outgoing = at::ones({elements}, at::kByte);
  const at::Tensor incoming = at::empty({elements}, at::kByte);
  std::vector<double> round_trip_seconds;
  // Two untimed round trips first: connections and buffers warm up.
  for (int i = 0; i < round_trips + 2; ++i) {
    if (initiator) {
      auto receive = transport.irecv(incoming, peer, probe_tag(true));
      const auto started = std::chrono::steady_clock::now();
      transport.isend(outgoing, peer, probe_tag(false))->wait(timeout);
      receive->wait(timeout);
      if (i >= 2) {
        round_trip_seconds.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      }
    } else {
      transport.irecv(incoming, peer, probe_tag(false))->wait(timeout);
      transport.isend(outgoing, peer, probe_tag(true))->wait(timeout);
    }
  }
  if (round_trip_seconds.empty()) return 0.0;
  std::sort(round_trip_seconds.begin(), round_trip_seconds.end());
  return round_trip_seconds[round_trip_seconds.size() / 2] / 2.0;
}

}  // namespace baton
