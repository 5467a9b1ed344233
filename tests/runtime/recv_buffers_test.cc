// Receive buffers are slots reused across microbatches: a slot given back is handed out again
// only when nothing else refers to its tensors or their memory, and a pool grows (visibly)
// rather than let a receive overwrite what a send, autograd or a stage still holds.
#include "baton/runtime/recv_buffers.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "baton/error.h"
#include "error_of.h"

namespace {

using baton::FlowDirection;
using baton::RecvBuffers;

baton::TensorMeta float_meta(std::vector<std::int64_t> shape) {
  return baton::TensorMeta::of(at::zeros(shape));
}

TEST(RecvBuffers, ASlotGivenBackIsHandedOutAgain) {
  RecvBuffers buffers;
  buffers.add_pool(1, FlowDirection::kForward, {float_meta({4, 8})}, 2);
  EXPECT_EQ(buffers.allocations(), 2);
  EXPECT_EQ(buffers.bytes(), 2 * 4 * 8 * 4);
  const int first = buffers.take_free_slot(1, FlowDirection::kForward);
  const int second = buffers.take_free_slot(1, FlowDirection::kForward);
  EXPECT_NE(first, second);
  EXPECT_EQ(buffers.take_free_slot(1, FlowDirection::kForward), -1);  // both taken
  buffers.give_back(1, FlowDirection::kForward, first);
  EXPECT_EQ(buffers.take_free_slot(1, FlowDirection::kForward), first);
  EXPECT_EQ(buffers.allocations(), 2);
}

TEST(RecvBuffers, ASlotStillReferencedIsNotHandedOut) {
  RecvBuffers buffers;
  buffers.add_pool(2, FlowDirection::kBackward, {float_meta({3})}, 1);
  const int slot = buffers.take_slot(2, FlowDirection::kBackward);
  // The stage passed the received tensor on (a send holds it), and autograd keeps a view.
  at::Tensor sent = buffers.tensors(2, FlowDirection::kBackward, slot)[0];
  buffers.give_back(2, FlowDirection::kBackward, slot);
  EXPECT_EQ(buffers.take_free_slot(2, FlowDirection::kBackward), -1);
  at::Tensor view = sent.detach().view({1, 3});
  sent = at::Tensor();
  EXPECT_EQ(buffers.take_free_slot(2, FlowDirection::kBackward), -1);  // the view shares it
  // take_slot never waits: it grows the pool, and says so in allocations().
  const int grown = buffers.take_slot(2, FlowDirection::kBackward);
  EXPECT_NE(grown, slot);
  EXPECT_EQ(buffers.allocations(), 2);
  EXPECT_EQ(buffers.slots(2, FlowDirection::kBackward), 2);
  view = at::Tensor();
  EXPECT_EQ(buffers.take_free_slot(2, FlowDirection::kBackward), slot);  // free again
}

TEST(RecvBuffers, HandedOutTensorsStayValidWhenThePoolGrows) {
  RecvBuffers buffers;
  buffers.add_pool(0, FlowDirection::kForward, {float_meta({2})}, 1);
  const int slot = buffers.take_slot(0, FlowDirection::kForward);
  const std::vector<at::Tensor>* held = &buffers.tensors(0, FlowDirection::kForward, slot);
  for (int i = 0; i < 100; ++i) buffers.take_slot(0, FlowDirection::kForward);
  EXPECT_EQ(held, &buffers.tensors(0, FlowDirection::kForward, slot));
}

TEST(RecvBuffers, AReceiveSetupDidNotForeseeIsNamed) {
  RecvBuffers buffers;
  EXPECT_THAT(
      baton_test::error_of<baton::Error>([&] { buffers.take_slot(3, FlowDirection::kBackward); }),
      testing::HasSubstr("no receive buffer for the gradients of stage 3"));
  buffers.add_pool(3, FlowDirection::kBackward, {}, 1);
  EXPECT_THAT(baton_test::error_of<baton::Error>(
                  [&] { buffers.add_pool(3, FlowDirection::kBackward, {}, 1); }),
              testing::HasSubstr("set up twice"));
}

}  // namespace
