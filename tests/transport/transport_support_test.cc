// The wording and checks shared by transport plugins (baton/transport_support.h).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

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
