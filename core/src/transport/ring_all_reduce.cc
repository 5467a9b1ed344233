#include "baton/ring_all_reduce.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "baton/error.h"
#include "baton/shard_collectives.h"

namespace baton {
namespace {

// Chunk k of n elements cut into g nearly equal parts: [begin, end).
std::int64_t chunk_begin(std::int64_t n, int g, int k) {
  return n * k / g;
}

int modulo(int value, int g) {
  return ((value % g) + g) % g;
}

// This member's place in the ring and its neighbours.
struct RingPlace {
  int size = 0;
  int index = 0;
  int next = 0;
  int previous = 0;
};

RingPlace place_in(const std::vector<int>& group, int rank) {
  const auto me = std::find(group.begin(), group.end(), rank);
  if (me == group.end()) {
    throw TransportError("rank " + std::to_string(rank) + " is not in the ring it runs over");
  }
  RingPlace place;
  place.size = static_cast<int>(group.size());
  place.index = static_cast<int>(me - group.begin());
  place.next = group[static_cast<std::size_t>(modulo(place.index + 1, place.size))];
  place.previous = group[static_cast<std::size_t>(modulo(place.index - 1, place.size))];
  return place;
}

// Posts what moves in one step (an empty shard moves nothing) and waits for both.
void ring_step(const at::Tensor& outgoing, const at::Tensor& incoming, const RingPlace& place,
               const RingLinks& links, std::chrono::milliseconds timeout) {
  std::unique_ptr<Work> received, sent;
  if (incoming.numel() > 0) received = links.recv(incoming, place.previous);
  if (outgoing.numel() > 0) sent = links.send(outgoing, place.next);
  if (received) received->wait(timeout);
  if (sent) sent->wait(timeout);
}

}  // namespace

void ring_all_reduce(const at::Tensor& tensor, const std::vector<int>& group, int rank,
                     const RingLinks& links, std::chrono::milliseconds timeout) {
  const RingPlace place = place_in(group, rank);
  const int g = place.size;
  const std::int64_t n = tensor.numel();
  if (g < 2 || n == 0) return;
  const int index = place.index;
  const int next = place.next;
  const int previous = place.previous;
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
    ring_step(chunk(modulo(index + 1 - step, g)), chunk(modulo(index - step, g)), place, links,
              timeout);
  }
}

void ring_reduce_scatter(const at::Tensor& input, const at::Tensor& output,
                         const std::vector<int>& group, int rank, const RingLinks& links,
                         std::chrono::milliseconds timeout) {
  const RingPlace place = place_in(group, rank);
  const std::int64_t n = input.numel();
  const ShardRange mine = shard_of(n, place.size, place.index);
  if (place.size < 2) {
    output.view({-1}).copy_(input.view({-1}).narrow(0, mine.begin, mine.size()));
    return;
  }
  // The sums build in a copy, so the input stays as it was.
  const at::Tensor sums = input.reshape({n}).clone();
  const auto shard = [&](int k) {
    const ShardRange range = shard_of(n, place.size, modulo(k, place.size));
    return sums.narrow(0, range.begin, range.size());
  };
  const at::Tensor scratch = at::empty({shard_of(n, place.size, 0).size()}, input.options());
  // After step s, shard (index - s - 2) holds the sum of s + 2 members' parts; after G - 1
  // steps shard (index - G - 1) = shard index holds everyone's.
  for (int step = 0; step < place.size - 1; ++step) {
    const at::Tensor outgoing = shard(place.index - step - 1);
    const at::Tensor target = shard(place.index - step - 2);
    const at::Tensor incoming = scratch.narrow(0, 0, target.numel());
    ring_step(outgoing, incoming, place, links, timeout);
    target.add_(incoming);
  }
  output.view({-1}).copy_(shard(place.index));
}

void ring_all_gather(const at::Tensor& input, const at::Tensor& output,
                     const std::vector<int>& group, int rank, const RingLinks& links,
                     std::chrono::milliseconds timeout) {
  const RingPlace place = place_in(group, rank);
  const std::int64_t n = output.numel();
  const at::Tensor flat = output.view({n});
  const auto shard = [&](int k) {
    const ShardRange range = shard_of(n, place.size, modulo(k, place.size));
    return flat.narrow(0, range.begin, range.size());
  };
  shard(place.index).copy_(input.view({-1}));
  // Each member passes on the shard it received last, its own first.
  for (int step = 0; step < place.size - 1; ++step) {
    ring_step(shard(place.index - step), shard(place.index - step - 1), place, links, timeout);
  }
}

}  // namespace baton
