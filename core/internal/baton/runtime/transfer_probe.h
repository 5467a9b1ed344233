// How long one message of a given size takes between two ranks over the run's own
// transport: a short ping-pong, for benchmarks that predict a step from measured costs.
#pragma once

#include <chrono>
#include <cstdint>

#include "baton/export.h"
#include "baton/transport.h"

namespace baton {

// Both ranks call it with the same `bytes` and `round_trips`; `initiator` is true on
// exactly one of them. Returns the median one-way time in seconds (half a round trip) on
// the initiator, 0 on the other. Uses tags of its own, outside the executor's.
BATON_API double probe_one_way_seconds(Transport& transport, int peer, bool initiator,
                                       std::int64_t bytes, int round_trips,
                                       std::chrono::milliseconds timeout);

}  // namespace baton
