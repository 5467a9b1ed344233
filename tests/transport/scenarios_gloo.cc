// Scenarios for limits of the gloo transport alone (see plugins/transports/gloo/wire.h).
#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "scenarios.h"

namespace baton_test {

void scenario_gloo_in_flight_limit(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  constexpr int kLimit = 4096;  // kSequenceWindow
  if (ctx.rank == 0) {
    std::vector<std::unique_ptr<baton::Work>> works;
    const at::Tensor byte = pattern_bytes(1, 0);
    for (int i = 0; i < kLimit; ++i) works.push_back(ctx.transport->isend(byte, 1, 5));
    std::string error = expect_transport_error("one send with the tag too many",
                                               [&] { ctx.transport->isend(byte, 1, 5); });
    expect_contains(error, "rank 0: send to rank 1 (tag 0x5, 1 byte)");
    expect_contains(error, "4096 operations with this tag and peer are in flight");
    works.push_back(ctx.transport->isend(byte, 1, 6));  // other tags are not limited
    ctx.barrier("limit reached");
    for (auto& work : works) work->wait(kWait);
    // Once the sends completed, the tag takes new ones.
    ctx.transport->isend(pattern_bytes(1, 7), 1, 5)->wait(kWait);
  } else {
    ctx.barrier("limit reached");
    std::vector<std::unique_ptr<baton::Work>> works;
    std::vector<at::Tensor> inbox;
    for (int i = 0; i < kLimit; ++i) {
      inbox.push_back(empty_bytes(1));
      works.push_back(ctx.transport->irecv(inbox.back(), 0, 5));
    }
    works.push_back(ctx.transport->irecv(empty_bytes(1), 0, 6));
    for (auto& work : works) work->wait(kWait);
    at::Tensor last = empty_bytes(1);
    ctx.transport->irecv(last, 0, 5)->wait(kWait);
    check_pattern(last, 7, "the send after the limit was lifted");
  }
  ctx.barrier("end");
}

}  // namespace baton_test
