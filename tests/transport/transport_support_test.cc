// The wording and checks shared by transport plugins (baton/transport_support.h).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "baton/shard_collectives.h"
#include "baton/transport_support.h"

namespace baton {
namespace {

TEST(TransportSupport, FormatsSecondsAsPeopleWriteThem) {
  EXPECT_EQ(format_seconds(std::chrono::milliseconds(60000)), "60 s");
  EXPECT_EQ(format_seconds(std::chrono::milliseconds(500)), "0.5 s");
  EXPECT_EQ(format_seconds(std::chrono::milliseconds(1250)), "1.25 s");
  EXPECT_EQ(format_seconds(std::chrono::milliseconds(1)), "0.001 s");
  EXPECT_EQ(format_seconds(std::chrono::milliseconds(0)), "0 s");
}

// Shards of ceil(n / members) in member order, the last ones shorter or empty: what every
// transport's reduce-scatter and all-gather cut a tensor into.
TEST(TransportSupport, ShardsAreCeilSizedInMemberOrder) {
  const auto range = [](std::int64_t n, int members, int index) {
    const ShardRange shard = shard_of(n, members, index);
    return std::make_pair(shard.begin, shard.end);
  };
  EXPECT_EQ(range(7, 3, 0), std::make_pair(std::int64_t{0}, std::int64_t{3}));
  EXPECT_EQ(range(7, 3, 1), std::make_pair(std::int64_t{3}, std::int64_t{6}));
  EXPECT_EQ(range(7, 3, 2), std::make_pair(std::int64_t{6}, std::int64_t{7}));
  EXPECT_EQ(range(1, 2, 0), std::make_pair(std::int64_t{0}, std::int64_t{1}));
  EXPECT_EQ(range(1, 2, 1), std::make_pair(std::int64_t{1}, std::int64_t{1}));
  EXPECT_EQ(range(8, 4, 3), std::make_pair(std::int64_t{6}, std::int64_t{8}));
  EXPECT_EQ(range(0, 3, 1).second - range(0, 3, 1).first, 0);
  // 10 over 4 is 3, 3, 3, 1: every element in exactly one shard, in order.
  for (const std::int64_t n : {0, 1, 5, 10, 1001}) {
    for (int members = 1; members <= 5; ++members) {
      std::int64_t next = 0;
      for (int index = 0; index < members; ++index) {
        const ShardRange shard = shard_of(n, members, index);
        EXPECT_EQ(shard.begin, next) << n << " over " << members;
        EXPECT_GE(shard.size(), 0);
        next = shard.end;
      }
      EXPECT_EQ(next, n) << n << " over " << members;
    }
  }
}

TEST(TransportSupport, DescribesOperations) {
  EXPECT_EQ((P2PDescription{P2PDirection::kRecv, 0, 0x10002, 4194304}.str()),
            "recv from rank 0 (tag 0x10002, 4194304 bytes)");
  EXPECT_EQ((P2PDescription{P2PDirection::kSend, 2, 0, 1}.str()),
            "send to rank 2 (tag 0x0, 1 byte)");
  EXPECT_EQ(rank_prefix(3), "rank 3: ");
}

std::string argument_error(const at::Tensor& tensor, int peer) {
  try {
    check_p2p_arguments(tensor, 1, 4, peer, P2PDirection::kRecv);
  } catch (const TransportError& error) {
    return error.what();
  }
  return "";
}

TEST(TransportSupport, ChecksTensorsAndPeers) {
  const at::Tensor good = at::zeros({2, 3});
  EXPECT_EQ(argument_error(good, 0), "");
  EXPECT_EQ(argument_error(at::zeros({0}), 2), "");
  EXPECT_EQ(argument_error(good, 4),
            "rank 1: recv from rank 4: no such rank (the world has ranks 0..3)");
  EXPECT_EQ(argument_error(good, -1),
            "rank 1: recv from rank -1: no such rank (the world has ranks 0..3)");
  EXPECT_EQ(argument_error(good, 1),
            "rank 1: recv from rank 1: a rank cannot send to or receive from itself");
  EXPECT_EQ(
      argument_error(good.t(), 0),
      "rank 1: recv from rank 0: the tensor is not contiguous (sizes [3, 2], strides [1, 3]); "
      "pass a contiguous tensor (e.g. tensor.contiguous())");
  EXPECT_EQ(argument_error(at::Tensor(), 0), "rank 1: recv from rank 0: the tensor is undefined");
  EXPECT_NE(argument_error(at::empty({2}, at::TensorOptions().device(at::kMeta)), 0)
                .find("the tensor is on meta; this transport moves CPU tensors only"),
            std::string::npos);
  EXPECT_EQ(tensor_bytes(at::zeros({3, 5}, at::kDouble)), 120u);
  EXPECT_EQ(tensor_bytes(at::zeros({0}, at::kFloat)), 0u);
}

}  // namespace
}  // namespace baton
