// How the bench measures, identically for a plugin and for its reference:
//
//   latency    ping-pong: rank 0 sends one message, rank 1 answers with one of the same size;
//              rank 0 times every round trip (its receive is posted before its send, rank 1's
//              next receive before its answer). Latency = half a round trip.
//   bandwidth  windowed stream: rank 1 posts `window` receives, rank 0 sends `messages`
//              messages back to back with up to `window` in flight; the clock runs from a
//              start token until rank 0 receives rank 1's token saying the last message
//              landed. Bandwidth = messages × size / that time.
#pragma once

#include <cstddef>
#include <vector>

#include "channel.h"

namespace baton_app {

// How much to measure for one message size.
struct SizePlan {
  int iterations = 0;  // timed round trips, and streamed messages, per round
  int warmup = 0;      // untimed round trips and messages before the first round
  int window = 0;      // stream: messages in flight (and receive buffers per channel)
};

// `requested` > 0: that many iterations (--iterations); 0: enough to move ~256 MiB per
// round, between 10 and 1000 messages.
SizePlan plan_size(std::size_t bytes, int requested);

// Round-trip times in seconds on rank 0; empty on rank 1.
std::vector<double> measure_round_trips(BenchChannel& channel, int rank, int round_trips);

// Seconds the stream took on rank 0; 0 on rank 1. `window`: slots the channel was prepared
// with (BenchBuffers::window()).
double measure_stream(BenchChannel& channel, int rank, int messages, int window);

}  // namespace baton_app
