// A probe leaves a model's buffers as it found them: a BatchNorm's forward in training mode
// moves its running statistics and counts a batch, which BuffersKept undoes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "baton/runtime/buffers_kept.h"
#include "baton/runtime/forward_seed.h"

namespace {

std::vector<std::pair<std::string, at::Tensor>> buffers_of(torch::nn::Module& module) {
  std::vector<std::pair<std::string, at::Tensor>> buffers;
  for (const auto& named : module.named_buffers()) buffers.emplace_back(named.key(), named.value());
  return buffers;
}

TEST(BuffersKept, AForwardInTrainingModeInsideLeavesTheRunningStatisticsAsTheyWere) {
  torch::nn::BatchNorm1d norm(4);
  norm->train();
  const at::Tensor mean = norm->running_mean.clone(), var = norm->running_var.clone();
  {
    const baton::BuffersKept kept(buffers_of(*norm));
    torch::NoGradGuard no_grad;
    norm->forward(torch::randn({8, 4}) * 3 + 1);
    ASSERT_FALSE(torch::equal(norm->running_mean, mean));  // the probe did move them
    ASSERT_EQ(norm->num_batches_tracked.item<std::int64_t>(), 1);
  }
  EXPECT_TRUE(torch::equal(norm->running_mean, mean));
  EXPECT_TRUE(torch::equal(norm->running_var, var));
  EXPECT_EQ(norm->num_batches_tracked.item<std::int64_t>(), 0);
  // The same tensors, changed in place: whoever holds them (a checkpoint's list) sees it.
  norm->forward(torch::randn({8, 4}));
  EXPECT_EQ(norm->num_batches_tracked.item<std::int64_t>(), 1);
}

TEST(ForwardSeed, EachStageAndMicrobatchOfAStepHasItsOwnSeedByTheDocumentedRule) {
  // (step_seed x 1000003 + stage) x 1000003 + microbatch, modulo 2^64.
  EXPECT_EQ(baton::forward_seed(7, 2, 3), (7ull * 1000003 + 2) * 1000003 + 3);
  EXPECT_NE(baton::forward_seed(7, 2, 3), baton::forward_seed(7, 3, 2));
  EXPECT_NE(baton::forward_seed(7, 0, 0), baton::forward_seed(8, 0, 0));
  const std::uint64_t big = ~0ull;
  EXPECT_EQ(baton::forward_seed(big, 1, 1), (big * 1000003 + 1) * 1000003 + 1);  // wraps
}

}  // namespace
