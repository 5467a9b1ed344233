#include "baton/ring_all_reduce.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "baton/error.h"

namespace baton {
namespace {

// Chunk k of n elements cut into g nearly equal parts: [begin, end).
std::int64_t chunk_begin(std::int64_t n, int g, int k) {
  return n * k / g;
}

int modulo(int value, int g) {
  return ((value % g) + g) % g;
}

}  // namespace

void ring_all_reduce(const at::Tensor& tensor, const std::vector<int>& group, int rank,
                     const RingLinks& links, std::chrono::milliseconds timeout) {
  const int g = static_cast<int>(group.size());
  const auto me = std::find(group.begin(), group.end(), rank);
  if (me == group.end()) {
    throw TransportError("rank " + std::to_string(rank) + " is not in the ring it reduces over");
  }
  const std::int64_t n = tensor.numel();
  if (g < 2 || n == 0) return;
  const int index = static_cast<int>(me - group.begin());
  const int next = group[static_cast<std::size_t>(modulo(index + 1, g))];
  const int previous = group[static_cast<std::size_t>(modulo(index - 1, g))];
  const at::Tensor flat = tensor.view({n});
  const auto chunk = [&](int k) {
    const std::int64_t begin = chunk_begin(n, g, k);
    return flat.narrow(0, begin, chunk_begin(n, g, k + 1) - begin);
  };
  std::int64_t largest = 0;
  for (int k = 0; k < g; ++k) largest = std::max(largest, chunk(k).numel());
  const at::Tensor scratch = at::empty({largest}, tensor.options());

  // Reduce-scatter: after step s, chunk (index - s - 1) holds the sum of s + 2 members' parts;
  // after g - 1 steps chunk (index + 1) holds everyone's.
  for (int step = 0; step < g - 1; ++step) {
    const at::Tensor outgoing = chunk(modulo(index - step, g));
    const at::Tensor target = chunk(modulo(index - step - 1, g));
    const at::Tensor incoming = scratch.narrow(0, 0, target.numel());
    auto received = links.recv(incoming, previous);
    auto sent = links.send(outgoing, next);
    received->wait(timeout);
    target.add_(incoming);
    // The chunk sent is overwritten by the all-gather: its send must be done by then, and
    // waiting now keeps at most one message per direction in flight.
    sent->wait(timeout);
  }
  // All-gather: each member passes on the summed chunk it received last.
  for (int step = 0; step < g - 1; ++step) {
    const at::Tensor outgoing = chunk(modulo(index + 1 - step, g));
    const at::Tensor target = chunk(modulo(index - step, g));
    auto received = links.recv(target, previous);
    auto sent = links.send(outgoing, next);
    received->wait(timeout);
    sent->wait(timeout);
  }
}

}  // namespace baton
