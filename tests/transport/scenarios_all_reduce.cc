// The all-reduce conformance scenarios (baton/all_reduce.h): sums exact to the last element at
// every size from empty to 64 MiB and in every dtype a transport must sum, several groups
// reducing at once, a peer killed mid-reduce, a timeout, and bad arguments. And its halves
// (baton/shard_collectives.h): reduce-scatter and all-gather at sizes the members do not
// divide (1 element over 2: an empty shard), in float32 and bfloat16 among others, mixed with
// all-reduces in one group, a member killed mid-collective, and bad shards.
#include <ATen/ATen.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "baton/all_reduce.h"
#include "baton/shard_collectives.h"
#include "scenarios.h"

namespace baton_test {
namespace {

baton::AllReduceTransport& all_reduce(RankContext& ctx) {
  check(ctx.interfaces.all_reduce != nullptr,
        "transport '" + ctx.transport_name + "' does not list baton.all_reduce");
  return *ctx.interfaces.all_reduce;
}

std::vector<int> every_rank(const RankContext& ctx) {
  std::vector<int> ranks;
  for (int rank = 0; rank < ctx.world_size; ++rank) ranks.push_back(rank);
  return ranks;
}

// Small integers, different on every rank and at every position, so that sums are exact in
// any dtype and a transport that drops, repeats or misplaces a chunk cannot pass.
// (Computed in int32, whose values fit every dtype here: the 64 MiB case makes and checks
// 16 Mi elements on every rank, and int64 temporaries doubled the memory each pass touched.)
at::Tensor contribution(std::int64_t numel, at::ScalarType dtype, int rank) {
  return at::arange(numel, at::kInt)
      .remainder(13)
      .add(3 * rank + 1)
      .to(dtype)
      .to(scenario_device());
}

// The group's sum in one pass: every member adds position % 13 and its own 3 rank + 1.
at::Tensor expected_sum(std::int64_t numel, at::ScalarType dtype, const std::vector<int>& group) {
  std::int64_t offsets = 0;
  for (const int rank : group) offsets += 3 * rank + 1;
  return at::arange(numel, at::kInt)
      .remainder(13)
      .mul(static_cast<std::int64_t>(group.size()))
      .add(offsets)
      .to(dtype);
}

void check_sum(const at::Tensor& got, const std::vector<int>& group, const std::string& what) {
  const at::Tensor want = expected_sum(got.numel(), got.scalar_type(), group);
  const at::Tensor actual = got.cpu().reshape({-1});
  if (at::equal(actual, want)) return;
  const std::int64_t first = at::ne(actual, want).nonzero().select(1, 0)[0].item<std::int64_t>();
  throw ScenarioFailure(what + ": element " + std::to_string(first) + " is " +
                        std::to_string(actual[first].item<double>()) + ", expected " +
                        std::to_string(want[first].item<double>()));
}

// A member was killed right after posting collective #1 of a group; #2 was posted behind it
// here. #1 fails from the dead member (not a timeout), and #2 behind it; or, on a machine
// that finished #1 before the kill landed, #2 — which the dead member never posted — fails.
// `first` and `second` name them ("all-reduce", "all-gather").
void expect_killed_member_fails(RankContext& ctx, baton::Work& work, baton::Work& later,
                                const std::string& first, const std::string& second) {
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  bool first_failed = true;
  try {
    work.wait(kWait);  // kWait is a hang guard: the error must come from the dead peer
    first_failed = false;
  } catch (const baton::TransportError& failure) {
    error = failure.what();
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string prefix = "rank " + std::to_string(ctx.rank) + ": ";
  if (first_failed) {
    std::cout << prefix << "#1 failed after " << waited << " s: " << error << std::endl;
    expect_contains(error, prefix + first + " #1 in group [0, 1, 2]");
    check(error.find("timed out") == std::string::npos, "the failure was a timeout: " + error);
    error = expect_transport_error("the collective queued behind it", [&] { later.wait(kWait); });
    expect_contains(error, second + " #2 in group [0, 1, 2]");
  } else {
    std::cout << prefix << "#1 completed before the kill (" << waited << " s)" << std::endl;
    error = expect_transport_error("the collective the killed member never posted",
                                   [&] { later.wait(kWait); });
    expect_contains(error, prefix + second + " #2 in group [0, 1, 2]");
    check(error.find("timed out") == std::string::npos, "the failure was a timeout: " + error);
  }
}

}  // namespace

void scenario_all_reduce_sizes(RankContext& ctx) {
  baton::AllReduceTransport& transport = all_reduce(ctx);
  const std::vector<int> group = every_rank(ctx);
  const int handle = transport.join_group(group);
  // One tensor per all-reduce, every size from empty to 64 MiB (16 Mi floats); odd sizes
  // leave the ring's chunks unequal.
  for (const std::int64_t numel :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{1001}, std::int64_t{262147},
        std::int64_t{16} << 20}) {
    at::Tensor tensor = contribution(numel, at::kFloat, ctx.rank);
    transport.iallreduce(handle, {tensor})->wait(kWait);
    check_sum(tensor, group, std::to_string(numel) + " floats");
  }
  // Several tensors of several dtypes in one all-reduce, and several all-reduces in flight:
  // they complete in posting order, each with its own sums.
  const std::vector<at::ScalarType> dtypes = {at::kDouble, at::kHalf, at::kBFloat16,
                                              at::kInt,    at::kLong, at::kByte};
  std::vector<std::vector<at::Tensor>> posted;
  std::vector<std::unique_ptr<baton::Work>> works;
  for (int round = 0; round < 3; ++round) {
    std::vector<at::Tensor> tensors;
    for (const at::ScalarType dtype : dtypes) {
      tensors.push_back(contribution(100 + 17 * round, dtype, ctx.rank));
    }
    works.push_back(transport.iallreduce(handle, tensors));
    posted.push_back(tensors);
  }
  for (std::size_t round = 0; round < works.size(); ++round) {
    works[round]->wait(kWait);
    for (std::size_t i = 0; i < dtypes.size(); ++i) {
      check_sum(posted[round][i], group,
                "round " + std::to_string(round) + ", " + c10::toString(dtypes[i]));
    }
  }
  ctx.barrier("end");
}

void scenario_all_reduce_groups(RankContext& ctx) {
  check(ctx.world_size == 4, "this scenario runs on 4 ranks");
  baton::AllReduceTransport& transport = all_reduce(ctx);
  // Rows {0, 1} and {2, 3}, columns {0, 2} and {1, 3}, joined in that order everywhere; the
  // whole world last. Rows and columns then reduce at the same time, pairs sharing a rank.
  const std::vector<int> row = ctx.rank < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
  const std::vector<int> column =
      ctx.rank % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3};
  const int row_handle = transport.join_group(row);
  const int column_handle = transport.join_group(column);
  const int world_handle = transport.join_group(every_rank(ctx));
  std::vector<at::Tensor> rows, columns;
  std::vector<std::unique_ptr<baton::Work>> row_works, column_works;
  for (int round = 0; round < 4; ++round) {
    rows.push_back(contribution(50000 + round, at::kFloat, ctx.rank));
    columns.push_back(contribution(70000 + round, at::kFloat, ctx.rank));
    row_works.push_back(transport.iallreduce(row_handle, {rows.back()}));
    column_works.push_back(transport.iallreduce(column_handle, {columns.back()}));
  }
  for (int round = 0; round < 4; ++round) {
    column_works[round]->wait(kWait);
    row_works[round]->wait(kWait);
    check_sum(rows[round], row,
              "row " + baton::format_group(row) + ", round " + std::to_string(round));
    check_sum(columns[round], column,
              "column " + baton::format_group(column) + ", round " + std::to_string(round));
  }
  at::Tensor everyone = contribution(4099, at::kDouble, ctx.rank);
  transport.iallreduce(world_handle, {everyone})->wait(kWait);
  check_sum(everyone, every_rank(ctx), "the whole world");
  ctx.barrier("end");
}

void scenario_all_reduce_peer_killed(RankContext& ctx) {
  check(ctx.world_size == 3, "this scenario runs on 3 ranks");
  baton::AllReduceTransport& transport = all_reduce(ctx);
  const int handle = transport.join_group(every_rank(ctx));
  at::Tensor big = contribution(std::int64_t{16} << 20, at::kFloat, ctx.rank);
  ctx.barrier("joined");
  if (ctx.rank == 2) {
    // Die with a large reduction under way.
    auto work = transport.iallreduce(handle, {big});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::raise(SIGKILL);
  }
  auto work = transport.iallreduce(handle, {big});
  auto later = transport.iallreduce(handle, {contribution(16, at::kFloat, ctx.rank)});
  expect_killed_member_fails(ctx, *work, *later, "all-reduce", "all-reduce");
}

void scenario_all_reduce_timeout(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  baton::AllReduceTransport& transport = all_reduce(ctx);
  const int handle = transport.join_group({0, 1});
  if (ctx.rank == 0) {
    // Rank 1 never posts it: the wait times out naming the all-reduce, and the transport is
    // aborted for that reason, so point-to-point transfers fail too.
    auto work = transport.iallreduce(handle, {contribution(16, at::kFloat, 0)});
    std::string error = expect_transport_error("all-reduce the peer never posts",
                                               [&] { work->wait(std::chrono::milliseconds(500)); });
    expect_contains(
        error, "rank 0: all-reduce #1 in group [0, 1] (1 tensor, 64 bytes) timed out after 0.5 s");
    error = expect_transport_error("a send after the timeout", [&] {
      ctx.transport->isend(pattern_bytes(16, 9), 1, 9)->wait(kWait);
    });
    expect_contains(error, "timed out after 0.5 s");
    error = expect_transport_error("an all-reduce after the timeout", [&] {
      transport.iallreduce(handle, {contribution(4, at::kFloat, 0)})->wait(kWait);
    });
    expect_contains(error, "all-reduce #2 in group [0, 1]");
    ctx.barrier("timed-out");
  } else {
    ctx.barrier("timed-out");
    std::string error = expect_transport_error("recv from a peer that timed out", [&] {
      ctx.transport->irecv(empty_bytes(16), 0, 9)->wait(kWait);
    });
    expect_contains(error, "peer rank 0 closed the connection");
  }
  ctx.barrier("end");
}

void scenario_all_reduce_rejects(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  baton::AllReduceTransport& transport = all_reduce(ctx);
  const std::string me = "rank " + std::to_string(ctx.rank) + ": ";
  std::string error = expect_transport_error("a group without this rank",
                                             [&] { transport.join_group({1 - ctx.rank}); });
  expect_contains(error,
                  me + "group [" + std::to_string(1 - ctx.rank) + "]: this rank is not a member");
  error = expect_transport_error("a group in descending order", [&] {
    transport.join_group({1, 0});
  });
  expect_contains(error, "ascending order");
  error = expect_transport_error("a group with rank 5", [&] { transport.join_group({0, 1, 5}); });
  expect_contains(error, "rank 5 is outside a world of 2 ranks");
  error = expect_transport_error("an unknown group handle", [&] {
    transport.iallreduce(7, {contribution(4, at::kFloat, 0)});
  });
  expect_contains(error, "never joined");
  const int handle = transport.join_group({0, 1});
  const auto on_device = at::TensorOptions().device(scenario_device());
  error = expect_transport_error("a transposed tensor", [&] {
    transport.iallreduce(handle, {at::zeros({8, 4}, on_device).t()});
  });
  expect_contains(error, me + "all-reduce #");
  expect_contains(error, "tensor 0 is not contiguous");
  error = expect_transport_error("an undefined tensor", [&] {
    transport.iallreduce(handle, {contribution(4, at::kFloat, 0), at::Tensor()});
  });
  expect_contains(error, "tensor 1 is undefined");
  error = expect_transport_error("a bool tensor", [&] {
    transport.iallreduce(handle, {at::zeros({4}, on_device.dtype(at::kBool))});
  });
  expect_contains(error, "tensor 0 is Bool");
  // After refusals the group still works.
  at::Tensor tensor = contribution(33, at::kFloat, ctx.rank);
  transport.iallreduce(handle, {tensor})->wait(kWait);
  check_sum(tensor, {0, 1}, "an all-reduce after the refusals");
  ctx.barrier("end");
}

namespace {

baton::ShardCollectiveTransport& shard_collectives(RankContext& ctx) {
  check(ctx.interfaces.shard_collectives != nullptr,
        "transport '" + ctx.transport_name + "' does not list baton.shard_collectives");
  return *ctx.interfaces.shard_collectives;
}

baton::ShardRange my_shard(std::int64_t numel, const RankContext& ctx) {
  return baton::shard_of(numel, ctx.world_size, ctx.rank);
}

}  // namespace

void scenario_shard_collective_sizes(RankContext& ctx) {
  baton::AllReduceTransport& reducer = all_reduce(ctx);
  baton::ShardCollectiveTransport& transport = shard_collectives(ctx);
  const std::vector<int> group = every_rank(ctx);
  const int handle = reducer.join_group(group);
  const auto on_device = at::TensorOptions().device(scenario_device());
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16, at::kDouble, at::kLong}) {
    for (const std::int64_t numel : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2},
                                     std::int64_t{7}, std::int64_t{1001}, std::int64_t{262147}}) {
      const std::string what = std::to_string(numel) + " " + c10::toString(dtype);
      const baton::ShardRange mine = my_shard(numel, ctx);
      // Reduce-scatter: this member's shard of the group's sum; the input as it was.
      const at::Tensor input = contribution(numel, dtype, ctx.rank);
      const at::Tensor kept = input.clone();
      at::Tensor shard = at::empty({mine.size()}, on_device.dtype(dtype));
      transport.ireduce_scatter(handle, input, shard)->wait(kWait);
      const at::Tensor want = expected_sum(numel, dtype, group).narrow(0, mine.begin, mine.size());
      if (!at::equal(shard.cpu(), want)) {
        throw ScenarioFailure("reduce-scatter of " + what + ": shard [" +
                              std::to_string(mine.begin) + ", " + std::to_string(mine.end) +
                              ") is not the group's sum");
      }
      check(at::equal(input, kept), "reduce-scatter of " + what + " changed its input");
      // All-gather: every member's shard in place, on every member.
      const at::Tensor whole = expected_sum(numel, dtype, group).to(scenario_device());
      at::Tensor gathered = at::full({numel}, -1, on_device.dtype(dtype));
      transport
          .iall_gather(handle, whole.narrow(0, mine.begin, mine.size()).contiguous(), gathered)
          ->wait(kWait);
      if (!at::equal(gathered.cpu(), whole.cpu())) {
        throw ScenarioFailure("all-gather of " + what +
                              ": the gathered tensor differs from the "
                              "members' shards side by side");
      }
    }
  }
  // In flight together with an all-reduce of the same group: they complete in posting order.
  const at::Tensor first = contribution(5000, at::kFloat, ctx.rank);
  at::Tensor summed = contribution(3001, at::kFloat, ctx.rank);
  at::Tensor shard = at::empty({my_shard(5000, ctx).size()}, on_device);
  auto scattered = transport.ireduce_scatter(handle, first, shard);
  auto reduced = reducer.iallreduce(handle, {summed});
  reduced->wait(kWait);
  scattered->wait(kWait);
  check_sum(summed, group, "an all-reduce posted after a reduce-scatter");
  check(at::equal(shard.cpu(), expected_sum(5000, at::kFloat, group)
                                   .narrow(0, my_shard(5000, ctx).begin, shard.numel())),
        "a reduce-scatter in flight with an all-reduce");
  ctx.barrier("end");
}

void scenario_shard_collective_peer_killed(RankContext& ctx) {
  check(ctx.world_size == 3, "this scenario runs on 3 ranks");
  baton::AllReduceTransport& reducer = all_reduce(ctx);
  baton::ShardCollectiveTransport& transport = shard_collectives(ctx);
  const int handle = reducer.join_group(every_rank(ctx));
  const std::int64_t numel = std::int64_t{16} << 20;
  const at::Tensor big = contribution(numel, at::kFloat, ctx.rank);
  at::Tensor shard =
      at::empty({my_shard(numel, ctx).size()}, at::TensorOptions().device(scenario_device()));
  ctx.barrier("joined");
  if (ctx.rank == 2) {
    auto work = transport.ireduce_scatter(handle, big, shard);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::raise(SIGKILL);
  }
  auto work = transport.ireduce_scatter(handle, big, shard);
  at::Tensor gathered = at::empty({16}, at::TensorOptions().device(scenario_device()));
  auto later = transport.iall_gather(
      handle, at::zeros({my_shard(16, ctx).size()}, gathered.options()), gathered);
  expect_killed_member_fails(ctx, *work, *later, "reduce-scatter", "all-gather");
}

void scenario_shard_collective_rejects(RankContext& ctx) {
  check(ctx.world_size == 2, "this scenario runs on 2 ranks");
  baton::AllReduceTransport& reducer = all_reduce(ctx);
  baton::ShardCollectiveTransport& transport = shard_collectives(ctx);
  const std::string me = "rank " + std::to_string(ctx.rank) + ": ";
  const int handle = reducer.join_group({0, 1});
  const auto on_device = at::TensorOptions().device(scenario_device());
  std::string error = expect_transport_error("a shard of the wrong size", [&] {
    transport.ireduce_scatter(handle, contribution(7, at::kFloat, ctx.rank),
                              at::empty({7}, on_device));
  });
  expect_contains(error, me + "reduce-scatter #");
  expect_contains(error,
                  "the output holds 7 elements, but this member's shard of 7 over 2 "
                  "members is [" +
                      std::string(ctx.rank == 0 ? "0, 4): 4" : "4, 7): 3"));
  error = expect_transport_error("an all-gather input of the wrong size", [&] {
    transport.iall_gather(handle, at::empty({1}, on_device), at::empty({9}, on_device));
  });
  expect_contains(error, "all-gather #");
  expect_contains(error, "the input holds 1 elements");
  error = expect_transport_error("two dtypes", [&] {
    transport.ireduce_scatter(handle, contribution(4, at::kFloat, ctx.rank),
                              at::empty({2}, on_device.dtype(at::kDouble)));
  });
  expect_contains(error, "give both one dtype");
  error = expect_transport_error("a transposed input", [&] {
    transport.ireduce_scatter(handle, at::zeros({4, 2}, on_device).t(), at::empty({4}, on_device));
  });
  expect_contains(error, "the input is not contiguous");
  // After refusals the group still works.
  at::Tensor shard = at::empty({my_shard(9, ctx).size()}, on_device);
  transport.ireduce_scatter(handle, contribution(9, at::kFloat, ctx.rank), shard)->wait(kWait);
  check(at::equal(
            shard.cpu(),
            expected_sum(9, at::kFloat, {0, 1}).narrow(0, my_shard(9, ctx).begin, shard.numel())),
        "a reduce-scatter after the refusals");
  ctx.barrier("end");
}

}  // namespace baton_test
