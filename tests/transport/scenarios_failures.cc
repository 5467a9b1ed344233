// Scenarios where something goes wrong: bad arguments, wrong sizes, timeouts, a dead peer,
// abort. Each checks the error's wording, and that failing does not mean hanging.
#include <ATen/ATen.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "baton/transport_support.h"
#include "scenarios.h"

namespace baton_test {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

void scenario_rejects(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  baton::Transport& transport = *ctx.transport;
  const int peer = 1 - ctx.rank;
  const std::string me = "rank " + std::to_string(ctx.rank) + ": ";

  const auto on_device = at::TensorOptions().device(scenario_device());
  at::Tensor transposed = at::zeros({8, 4}, on_device.dtype(at::kFloat)).t();
  std::string error = expect_transport_error("irecv into a transposed tensor",
                                             [&] { transport.irecv(transposed, peer, 1); });
  expect_contains(error, me + "recv from rank " + std::to_string(peer));
  expect_contains(error, "not contiguous (sizes [4, 8], strides [1, 4])");
  error = expect_transport_error("isend of a strided slice", [&] {
    transport.isend(at::zeros({16}, on_device.dtype(at::kInt)).slice(0, 0, 16, 2), peer, 1);
  });
  expect_contains(error, "not contiguous");

  at::Tensor meta = at::empty({4}, at::TensorOptions().dtype(at::kFloat).device(at::kMeta));
  error = expect_transport_error("isend of a meta tensor", [&] { transport.isend(meta, peer, 1); });
  expect_contains(error, "the tensor is on meta");

  error = expect_transport_error("irecv of an undefined tensor",
                                 [&] { transport.irecv(at::Tensor(), peer, 1); });
  expect_contains(error, "undefined");

  at::Tensor ok = empty_bytes(4);
  error = expect_transport_error("isend to rank 7", [&] { transport.isend(ok, 7, 1); });
  expect_contains(error, me + "send to rank 7: no such rank (the world has ranks 0..1)");
  error = expect_transport_error("irecv from itself", [&] { transport.irecv(ok, ctx.rank, 1); });
  expect_contains(error, "cannot send to or receive from itself");
  ctx.barrier("end");
}

namespace {

// The sender's side of a size mismatch: its wait ends within the timeout, either done (a
// transport that checks sizes on arrival) or with a TransportError (one that compares notes
// and aborts) — never a hang, a crash or another kind of error.
void sender_ends(baton::Work& work) {
  try {
    work.wait(kWait);
  } catch (const baton::TransportError&) {
  }
}

// The receiver's side: its wait fails naming the operation and both sizes.
void receiver_names_both_sizes(RankContext& ctx, baton::Work& work, const std::string& operation,
                               std::size_t sent, std::size_t held) {
  const std::string error = expect_transport_error(
      "receive " + std::to_string(sent) + " bytes into " + std::to_string(held),
      [&] { work.wait(kWait); });
  expect_contains(error, "rank " + std::to_string(ctx.rank) + ": " + operation);
  expect_contains(error, std::to_string(sent) + " bytes");
  expect_contains(error, std::to_string(held) + " bytes");
}

// One message of `sent` bytes with `tag`, received into `held` bytes.
void one_mismatch(RankContext& ctx, std::size_t sent, std::size_t held, std::uint64_t tag) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  if (ctx.rank == 0) {
    auto send = ctx.transport->isend(pattern_bytes(sent, 1), 1, tag);
    sender_ends(*send);
  } else {
    auto recv = ctx.transport->irecv(empty_bytes(held), 0, tag);
    receiver_names_both_sizes(
        ctx, *recv,
        "recv from rank 0 (tag " + baton::format_tag(tag) + ", " + std::to_string(held) + " bytes)",
        sent, held);
  }
  ctx.barrier("end");
}

}  // namespace

// A size mismatch is reported clearly; what the transport can do afterwards is not promised
// (the runtime ends the run on it): see docs/writing-a-transport.md.
void scenario_wrong_size(RankContext& ctx) {
  one_mismatch(ctx, 4096, 2048, 3);
}

// Too large a receive is as wrong as too small a one.
void scenario_wrong_size_larger_receive(RankContext& ctx) {
  one_mismatch(ctx, 8, 16, 4);
}

// Transports may find a mismatch when the message arrives, or (gloo) by comparing notes
// once the operations wait; each case gives the other side a head start.
void scenario_wrong_size_receive_first(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  if (ctx.rank == 0) {
    ctx.barrier("receive posted");
    auto wrong = ctx.transport->isend(pattern_bytes(32, 1), 1, 20);
    sender_ends(*wrong);
  } else {
    auto wrong = ctx.transport->irecv(empty_bytes(16), 0, 20);
    ctx.barrier("receive posted");
    receiver_names_both_sizes(ctx, *wrong, "recv from rank 0 (tag 0x14, 16 bytes)", 32, 16);
  }
  ctx.barrier("end");
}

void scenario_wrong_size_send_first(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  constexpr std::size_t kMiB = 1 << 20;
  // The send waits for a while before its receive exists.
  if (ctx.rank == 0) {
    auto early = ctx.transport->isend(pattern_bytes(2 * kMiB, 3), 1, 21);
    sender_ends(*early);
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    auto late = ctx.transport->irecv(empty_bytes(kMiB), 0, 21);
    receiver_names_both_sizes(ctx, *late, "recv from rank 0 (tag 0x15, 1048576 bytes)", 2 * kMiB,
                              kMiB);
  }
  ctx.barrier("end");
}

void scenario_wrong_size_after_matches(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  if (ctx.rank == 0) {
    std::vector<std::unique_ptr<baton::Work>> works;
    for (int i = 0; i < 3; ++i) {
      works.push_back(ctx.transport->isend(pattern_bytes(8, 10 + i), 1, 22));
    }
    for (auto& work : works) work->wait(kWait);
    auto wrong = ctx.transport->isend(pattern_bytes(8, 13), 1, 22);
    sender_ends(*wrong);
  } else {
    for (int i = 0; i < 3; ++i) {
      at::Tensor inbox = empty_bytes(8);
      ctx.transport->irecv(inbox, 0, 22)->wait(kWait);
      check_pattern(inbox, 10 + i, "matched message " + std::to_string(i) + " (tag 22)");
    }
    auto wrong = ctx.transport->irecv(empty_bytes(4), 0, 22);
    receiver_names_both_sizes(ctx, *wrong, "recv from rank 0 (tag 0x16, 4 bytes)", 8, 4);
  }
  ctx.barrier("end");
}

void scenario_timeout(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  // A wait that times out names the operation and the timeout, and leaves the transport
  // aborted for that reason: the runtime ends a run at its first timeout, so a transport
  // promises clear errors after one, here and at the peer, not recovery.
  if (ctx.rank == 0) {
    auto recv = ctx.transport->irecv(empty_bytes(16), 1, 7);
    auto other = ctx.transport->irecv(empty_bytes(16), 1, 8);  // pending when it times out
    auto start = Clock::now();
    std::string error = expect_transport_error("recv nobody sends",
                                               [&] { recv->wait(std::chrono::milliseconds(500)); });
    const double waited = seconds_since(start);
    expect_contains(error, "rank 0: recv from rank 1 (tag 0x7, 16 bytes) timed out after 0.5 s");
    // Only a lower bound: a timeout must not fire early; how late it fires on a loaded
    // machine is not this test's business (the error text above shows it was the timeout).
    check(waited >= 0.45, "the 0.5 s timeout fired after " + std::to_string(waited) + " s");
    // kWait is a hang guard: what was pending fails at once, naming the timeout.
    error = expect_transport_error("another receive pending at the timeout",
                                   [&] { other->wait(kWait); });
    expect_contains(error, "rank 0: recv from rank 1 (tag 0x8, 16 bytes)");
    expect_contains(error, "timed out after 0.5 s");
    error = expect_transport_error("a send after the timeout", [&] {
      ctx.transport->isend(pattern_bytes(16, 9), 1, 9)->wait(kWait);
    });
    expect_contains(error, "timed out after 0.5 s");
    ctx.barrier("timed-out");
  } else {
    ctx.barrier("timed-out");
    // The peer's transport aborted and closed its connections: this rank fails fast.
    std::string error = expect_transport_error("recv from a peer that timed out", [&] {
      ctx.transport->irecv(empty_bytes(16), 0, 9)->wait(kWait);
    });
    expect_contains(error, "peer rank 0 closed the connection");
  }
  ctx.barrier("end");
}

void scenario_peer_killed(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  constexpr std::size_t kBig = 64 << 20;
  if (ctx.rank == 1) {
    ctx.barrier("posted");
    // Die with a large transfer under way.
    auto send = ctx.transport->isend(pattern_bytes(kBig, 1), 0, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::raise(SIGKILL);
  }
  at::Tensor big = empty_bytes(kBig);
  auto first = ctx.transport->irecv(big, 1, 1);
  auto second = ctx.transport->irecv(empty_bytes(16), 1, 2);  // never sent
  ctx.barrier("posted");
  // The first receive may or may not complete before the peer died; the second cannot. kWait
  // is a hang guard: the error must name the closed connection, not a timeout.
  std::string error;
  try {
    first->wait(kWait);
    std::cout << "rank 0: the 64 MiB receive completed before the peer died" << std::endl;
    error = expect_transport_error("receive from a killed peer", [&] { second->wait(kWait); });
  } catch (const baton::TransportError& failure) {
    std::cout << "rank 0: the 64 MiB receive failed mid-transfer" << std::endl;
    error = failure.what();
  }
  expect_contains(error, "rank 0: recv from rank 1");
  expect_contains(error, "peer rank 1 closed the connection");
  // Later operations with the dead peer fail at once, too.
  error = expect_transport_error("send to a dead peer", [&] {
    ctx.transport->isend(pattern_bytes(16, 0), 1, 3)->wait(kWait);
  });
  expect_contains(error, "rank 1");
}

void scenario_abort(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  at::Tensor inbox = empty_bytes(16);
  auto recv = ctx.transport->irecv(inbox, 1 - ctx.rank, 9);  // nobody sends
  ctx.barrier("posted");
  // kWait is a hang guard: each error must name the abort, not a timeout.
  if (ctx.rank == 0) {
    std::thread aborter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      ctx.transport->abort("stage 3 failed");
    });
    std::string error = expect_transport_error("wait across abort", [&] { recv->wait(kWait); });
    aborter.join();
    expect_contains(error, "rank 0: recv from rank 1 (tag 0x9, 16 bytes)");
    expect_contains(error, "aborted: stage 3 failed");
    error =
        expect_transport_error("isend after abort", [&] { ctx.transport->isend(inbox, 1, 10); });
    expect_contains(error, "aborted: stage 3 failed");
    error =
        expect_transport_error("irecv after abort", [&] { ctx.transport->irecv(inbox, 1, 10); });
    expect_contains(error, "aborted: stage 3 failed");
  } else {
    // The aborting rank closes its connections: this rank fails fast instead of timing out.
    std::string error =
        expect_transport_error("wait on an aborted peer", [&] { recv->wait(kWait); });
    expect_contains(error, "peer rank 0 closed the connection");
  }
  ctx.barrier("end");
}

}  // namespace baton_test
