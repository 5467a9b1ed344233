// The prefetcher hands out exactly the batches the source makes, in any order of steps, and
// a failure in the background reaches the step it belongs to.
#include "batch_prefetcher.h"
#include "error_of.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace {

// Batch of step s: inputs filled with s, targets with -s; step 7 fails.
class CountingSource : public baton_models::BatchSource {
 public:
  baton_models::Batch batch(int step) const override {
    ++made;
    if (step == 7) throw std::runtime_error("step 7 cannot be read");
    return {{at::full({2, 3}, static_cast<float>(step))}, at::full({2}, -step, at::kLong)};
  }
  mutable std::atomic<int> made{0};
};

TEST(BatchPrefetcher, HandsOutTheSourcesBatchesForConsecutiveSteps) {
  CountingSource source;
  baton_models::BatchPrefetcher prefetcher(source);
  for (int step = 1; step <= 5; ++step) {
    const auto batch = prefetcher.take(step);
    ASSERT_EQ(batch.inputs.size(), 1u);
    EXPECT_EQ(batch.inputs[0][0][0].item<float>(), static_cast<float>(step));
    EXPECT_EQ(batch.targets[0].item<std::int64_t>(), -step);
  }
}

TEST(BatchPrefetcher, AJumpMakesTheAskedStepItself) {
  CountingSource source;
  baton_models::BatchPrefetcher prefetcher(source);
  EXPECT_EQ(prefetcher.take(3).inputs[0][0][0].item<float>(), 3.0f);
  EXPECT_EQ(prefetcher.take(10).inputs[0][0][0].item<float>(), 10.0f);  // 4 was prefetched
  EXPECT_EQ(prefetcher.take(11).inputs[0][0][0].item<float>(), 11.0f);
}

TEST(BatchPrefetcher, ABackgroundFailureIsThrownForItsStep) {
  CountingSource source;
  baton_models::BatchPrefetcher prefetcher(source);
  prefetcher.take(6);  // starts making step 7 in the background
  EXPECT_THAT(baton_test::error_of<std::runtime_error>([&] { prefetcher.take(7); }),
              ::testing::HasSubstr("step 7 cannot be read"));
  EXPECT_EQ(prefetcher.take(8).inputs[0][0][0].item<float>(), 8.0f);
}

TEST(BatchPrefetcher, DropsWhatTheRankDoesNotUse) {
  CountingSource source;
  baton_models::BatchPrefetcher inputs_only(source, true, false);
  const auto first = inputs_only.take(1);
  EXPECT_EQ(first.inputs.size(), 1u);
  EXPECT_FALSE(first.targets.defined());
  baton_models::BatchPrefetcher targets_only(source, false, true);
  const auto last = targets_only.take(1);
  EXPECT_TRUE(last.inputs.empty());
  EXPECT_TRUE(last.targets.defined());
}

}  // namespace
