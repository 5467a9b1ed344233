// Scenarios where every transfer must succeed and deliver exactly the bytes sent.
#include <ATen/ATen.h>

#include <thread>
#include <vector>

#include "baton/transport_support.h"
#include "scenarios.h"

namespace baton_test {

namespace {

using WorkList = std::vector<std::unique_ptr<baton::Work>>;

void wait_all(WorkList& works) {
  for (auto& work : works) work->wait(kWait);
}

// Rank 0 and rank 1 exchange one message of each size in both directions, all posted at
// once; contents are checked byte by byte.
void exchange_sizes(RankContext& ctx, const std::vector<std::size_t>& sizes) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  const int peer = 1 - ctx.rank;
  std::vector<at::Tensor> inbox;
  WorkList works;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    inbox.push_back(empty_bytes(sizes[i]));
    works.push_back(ctx.transport->irecv(inbox.back(), peer, 100 * peer + i));
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    works.push_back(ctx.transport->isend(pattern_bytes(sizes[i], 1000 * ctx.rank + i), peer,
                                         100 * ctx.rank + i));
  }
  wait_all(works);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    check_pattern(inbox[i], 1000 * peer + i, std::to_string(sizes[i]) + "-byte message");
  }
  ctx.barrier("end");
}

// Values for any dtype that differ with the sending rank, so a transport that hands a rank
// back its own data (or another pair's) cannot pass.
at::Tensor reference_values(at::ScalarType dtype, at::IntArrayRef shape, int sender) {
  std::int64_t numel = 1;
  for (std::int64_t size : shape) numel *= size;
  at::Tensor base = at::arange(numel, at::kDouble)
                        .mul(0.731)
                        .add(1.9 * sender + 0.4)
                        .sin()
                        .mul(50.0)
                        .reshape(shape);
  switch (dtype) {
    case at::kBool:
      return sender % 2 == 0 ? base.gt(0) : base.le(0);
    case at::kByte:
      return base.abs().to(dtype);
    case at::kComplexFloat:
    case at::kComplexDouble:
      return at::complex(base, base.cos()).to(dtype);
    default:
      return base.to(dtype);
  }
}

// On the scenario's device.
at::Tensor reference_tensor(at::ScalarType dtype, at::IntArrayRef shape, int sender) {
  return reference_values(dtype, shape, sender).to(scenario_device());
}

}  // namespace

void scenario_small_sizes(RankContext& ctx) {
  exchange_sizes(ctx, {0, 1, 2, 3, 7, 13, 255, 1000, 4093, 4096});
}

void scenario_large_sizes(RankContext& ctx) {
  exchange_sizes(ctx, {64 * 1024 + 3, 1 << 20, (1 << 20) + 1, 16 << 20, 64 << 20});
}

void scenario_dtypes(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  const std::vector<at::ScalarType> dtypes = {
      at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kChar,         at::kShort,
      at::kInt,   at::kLong,   at::kByte, at::kBool,     at::kComplexFloat, at::kComplexDouble};
  // Odd shapes, a 0-d tensor and an empty one.
  const std::vector<std::vector<std::int64_t>> shapes = {{3, 5, 7}, {}, {0, 4}};
  const int peer = 1 - ctx.rank;
  std::vector<at::Tensor> inbox;
  WorkList works;
  std::uint64_t tag = 0;
  for (at::ScalarType dtype : dtypes) {
    for (const auto& shape : shapes) {
      inbox.push_back(at::empty(shape, at::TensorOptions().dtype(dtype).device(scenario_device())));
      works.push_back(ctx.transport->irecv(inbox.back(), peer, tag));
      works.push_back(ctx.transport->isend(reference_tensor(dtype, shape, ctx.rank), peer, tag));
      ++tag;
    }
  }
  wait_all(works);
  std::size_t index = 0;
  for (at::ScalarType dtype : dtypes) {
    for (const auto& shape : shapes) {
      const at::Tensor expected = reference_tensor(dtype, shape, peer);
      check(at::equal(inbox[index], expected), std::string("dtype ") + c10::toString(dtype) +
                                                   " shape " + std::to_string(shape.size()) +
                                                   "-d: received values differ from those sent");
      ++index;
    }
  }
  ctx.barrier("end");
}

void scenario_out_of_order(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  constexpr int kOps = 64;
  constexpr std::uint64_t kBase = 1000;
  auto size_of = [](int i) { return static_cast<std::size_t>(37 * i + 5); };
  if (ctx.rank == 1) {
    std::vector<at::Tensor> inbox;
    WorkList works;
    for (int i = 0; i < kOps; ++i) {
      inbox.push_back(empty_bytes(size_of(i)));
      works.push_back(ctx.transport->irecv(inbox.back(), 0, kBase + i));
    }
    // A receive whose Work is dropped at once still completes into its (kept) tensor and
    // does not disturb the transfers after it.
    ctx.transport->irecv(empty_bytes(8), 0, 5000);
    ctx.barrier("posted");
    // The upper half is sent first (in reverse); the lower half not yet.
    for (int i = kOps - 1; i >= kOps / 2; --i) works[i]->wait(kWait);
    for (int i = 0; i < kOps / 2; ++i) {
      check(!works[i]->test(),
            "tag " + std::to_string(kBase + i) + " completed before it was sent");
    }
    ctx.barrier("upper-done");
    // Poll with test() until everything is in.
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    for (;;) {
      bool all = true;
      for (auto& work : works) all = work->test() && all;
      if (all) break;
      check(std::chrono::steady_clock::now() < deadline, "test() never reported completion");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (int i = 0; i < kOps; ++i) check_pattern(inbox[i], i, "tag " + std::to_string(kBase + i));
    at::Tensor after = empty_bytes(16);
    ctx.transport->irecv(after, 0, 5001)->wait(kWait);
    check_pattern(after, 77, "message after the dropped receive");
  } else {
    ctx.barrier("posted");
    WorkList works;
    for (int i = kOps - 1; i >= kOps / 2; --i) {
      works.push_back(ctx.transport->isend(pattern_bytes(size_of(i), i), 1, kBase + i));
    }
    wait_all(works);
    ctx.barrier("upper-done");
    works.clear();
    for (int i = kOps / 2 - 1; i >= 0; --i) {
      works.push_back(ctx.transport->isend(pattern_bytes(size_of(i), i), 1, kBase + i));
    }
    works.push_back(ctx.transport->isend(pattern_bytes(8, 5), 1, 5000));
    works.push_back(ctx.transport->isend(pattern_bytes(16, 77), 1, 5001));
    wait_all(works);
  }
  ctx.barrier("end");
}

void scenario_same_tag_order(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  constexpr int kMessages = 24;
  constexpr std::uint64_t kTag = 7;
  // Different sizes: a reordering would also be a size mismatch.
  auto size_of = [](int i) { return static_cast<std::size_t>(97 * i + 1); };
  if (ctx.rank == 1) {
    std::vector<at::Tensor> inbox;
    WorkList works;
    // Half the receives are posted before the messages are sent, half after they arrived.
    for (int i = 0; i < kMessages / 2; ++i) {
      inbox.push_back(empty_bytes(size_of(i)));
      works.push_back(ctx.transport->irecv(inbox.back(), 0, kTag));
    }
    ctx.barrier("first-half-posted");
    ctx.barrier("all-sent");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (int i = kMessages / 2; i < kMessages; ++i) {
      inbox.push_back(empty_bytes(size_of(i)));
      works.push_back(ctx.transport->irecv(inbox.back(), 0, kTag));
    }
    wait_all(works);
    for (int i = 0; i < kMessages; ++i) check_pattern(inbox[i], i, "message " + std::to_string(i));
  } else {
    ctx.barrier("first-half-posted");
    WorkList works;
    for (int i = 0; i < kMessages; ++i) {
      works.push_back(ctx.transport->isend(pattern_bytes(size_of(i), i), 1, kTag));
    }
    ctx.barrier("all-sent");
    wait_all(works);
  }
  ctx.barrier("end");
}

void scenario_reused_tensors(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  // Pipelines send and receive the same preallocated tensors every step; a transport that
  // keeps per-tensor state (gloo reuses its buffers) must stay exact across reuses, also
  // when the message arrives long after its receive was posted, and let go of a tensor with
  // its Work.
  constexpr int kSteps = 40;
  constexpr std::size_t kBytes = 4096;
  const int peer = 1 - ctx.rank;
  at::Tensor outbox = empty_bytes(kBytes);
  at::Tensor inbox = empty_bytes(kBytes);
  for (int step = 0; step < kSteps; ++step) {
    outbox.copy_(pattern_bytes(kBytes, 1000 * ctx.rank + step));
    // Every tenth step rank 0 sends only once rank 1 has waited for a while (past gloo's
    // size probe, which a long-pending receive sends).
    const bool late_sender = step % 10 == 9;
    auto recv = ctx.transport->irecv(inbox, peer, 3);
    if (ctx.rank == 1 && late_sender) {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      check(!recv->test(), "a receive completed before its message was sent");
    }
    if (late_sender) ctx.barrier("late-" + std::to_string(step));
    auto send = ctx.transport->isend(outbox, peer, 3);
    recv->wait(kWait);
    send->wait(kWait);
    check_pattern(inbox, 1000 * peer + step, "step " + std::to_string(step));
    // Once its Work is gone the transport holds nothing of a tensor: the runtime reuses a
    // receive buffer only when nothing else refers to it.
    recv.reset();
    send.reset();
    for (const at::Tensor* tensor : {&inbox, &outbox}) {
      check(tensor->use_count() == 1 && tensor->storage().use_count() == 1,
            "step " + std::to_string(step) + ": the transport still holds a tensor (" +
                std::to_string(tensor->use_count()) + " references, its memory " +
                std::to_string(tensor->storage().use_count()) + ") after its Work is destroyed");
    }
  }
  ctx.barrier("end");
}

void scenario_all_to_all(RankContext& ctx) {
  // Every rank sends several tagged messages to every other rank at once.
  constexpr int kPerPeer = 6;
  auto size_of = [](int from, int to, int k) {
    return static_cast<std::size_t>(1 + 4099 * k + 131 * from + 17 * to);
  };
  auto seed_of = [](int from, int to, int k) {
    return static_cast<std::uint64_t>(10000 * from + 100 * to + k);
  };
  std::vector<at::Tensor> inbox;
  std::vector<std::uint64_t> seeds;
  WorkList works;
  for (int peer = 0; peer < ctx.world_size; ++peer) {
    if (peer == ctx.rank) continue;
    for (int k = 0; k < kPerPeer; ++k) {
      inbox.push_back(empty_bytes(size_of(peer, ctx.rank, k)));
      seeds.push_back(seed_of(peer, ctx.rank, k));
      works.push_back(ctx.transport->irecv(inbox.back(), peer, k));
    }
  }
  for (int peer = 0; peer < ctx.world_size; ++peer) {
    if (peer == ctx.rank) continue;
    for (int k = kPerPeer - 1; k >= 0; --k) {
      works.push_back(ctx.transport->isend(
          pattern_bytes(size_of(ctx.rank, peer, k), seed_of(ctx.rank, peer, k)), peer, k));
    }
  }
  wait_all(works);
  for (std::size_t i = 0; i < inbox.size(); ++i)
    check_pattern(inbox[i], seeds[i], "message " + std::to_string(i));
  ctx.barrier("end");
}

void scenario_ring(RankContext& ctx) {
  at::Tensor inbox = empty_bytes(1 << 20);
  auto recv = ctx.transport->irecv(inbox, ctx.previous_rank(), 3);
  auto send = ctx.transport->isend(pattern_bytes(1 << 20, ctx.rank), ctx.next_rank(), 3);
  send->wait(kWait);
  recv->wait(kWait);
  check_pattern(inbox, ctx.previous_rank(), "ring message");
  ctx.barrier("end");
}

}  // namespace baton_test
