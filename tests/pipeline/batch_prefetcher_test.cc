// The prefetcher hands out exactly the microbatches the source makes, in the order a step
// uses them or any other, makes only a few ahead (never a whole batch), and a failure in the
// background reaches the microbatch it belongs to.
#include "batch_prefetcher.h"
#include "baton/error.h"
#include "error_of.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace {

// 8 rows a step; row r of step s: inputs s * 100 + r, targets -(s * 100 + r). Step 7 fails.
class CountingSource : public baton_models::BatchSource {
 public:
  baton_models::Batch rows(int step, std::int64_t first, std::int64_t count) const override {
    ++calls;
    rows_made += count;
    if (step == 7) throw std::runtime_error("step 7 cannot be read");
    const at::Tensor values = at::arange(first, first + count, at::kLong) + step * 100;
    return {{values.to(at::kFloat).unsqueeze(1).expand({count, 3}).contiguous()}, -values};
  }
  std::int64_t rows_per_step() const override { return 8; }
  mutable std::atomic<int> calls{0};
  mutable std::atomic<std::int64_t> rows_made{0};
};

float first_input(const std::vector<at::Tensor>& inputs) {
  return inputs.at(0)[0][0].item<float>();
}

TEST(BatchPrefetcher, HandsOutTheSourcesMicrobatchesForConsecutiveSteps) {
  CountingSource source;
  baton_models::BatchPrefetcher prefetcher(source, 4);  // 2 rows a microbatch
  for (int step = 1; step <= 3; ++step) {
    for (int microbatch = 0; microbatch < 4; ++microbatch) {
      const auto inputs = prefetcher.inputs(step, microbatch);
      ASSERT_EQ(inputs.size(), 1u);
      EXPECT_EQ(inputs[0].sizes(), at::IntArrayRef({2, 3}));
      EXPECT_EQ(first_input(inputs), static_cast<float>(step * 100 + 2 * microbatch));
      const auto targets = prefetcher.targets(step, microbatch);
      EXPECT_EQ(targets[1].item<std::int64_t>(), -(step * 100 + 2 * microbatch + 1));
    }
  }
}

TEST(BatchPrefetcher, MakesOnlyAFewMicrobatchesAhead) {
  CountingSource source;
  baton_models::BatchPrefetcher prefetcher(source, 8, true, true, 2);
  prefetcher.inputs(1, 0);
  prefetcher.targets(1, 0);
  // The worker makes microbatches 1 and 2 and stops: far fewer than the step's 8. (Waited
  // for as an event, the worker waiting to be asked; 60 s is a hang guard.)
  ASSERT_TRUE(prefetcher.wait_until_caught_up(std::chrono::seconds(60)));
  EXPECT_EQ(prefetcher.made(), 3);
  EXPECT_EQ(source.rows_made.load(), 3);  // one row each: never the whole batch at once
}

TEST(BatchPrefetcher, TargetsTakenLaterThanInputsStayUntilTaken) {
  // As on a rank holding the first and the last stage: inputs run ahead of targets.
  CountingSource source;
  baton_models::BatchPrefetcher prefetcher(source, 4);
  for (int microbatch = 0; microbatch < 4; ++microbatch) prefetcher.inputs(2, microbatch);
  for (int microbatch = 0; microbatch < 4; ++microbatch) {
    EXPECT_EQ(prefetcher.targets(2, microbatch)[0].item<std::int64_t>(), -(200 + 2 * microbatch));
  }
}

TEST(BatchPrefetcher, AJumpMakesTheAskedMicrobatch) {
  CountingSource source;
  baton_models::BatchPrefetcher prefetcher(source, 4, true, false);
  EXPECT_EQ(first_input(prefetcher.inputs(3, 1)), 302.0f);
  EXPECT_EQ(first_input(prefetcher.inputs(10, 0)), 1000.0f);  // 3's next ones were prefetched
  EXPECT_EQ(first_input(prefetcher.inputs(10, 1)), 1002.0f);
  // Asked again after it was handed out: made again, the same.
  EXPECT_EQ(first_input(prefetcher.inputs(10, 1)), 1002.0f);
  EXPECT_EQ(first_input(prefetcher.inputs(10, 1)), 1002.0f);
}

TEST(BatchPrefetcher, ABackgroundFailureIsThrownForItsMicrobatch) {
  CountingSource source;
  baton_models::BatchPrefetcher prefetcher(source, 2, true, false);
  prefetcher.inputs(6, 0);
  prefetcher.inputs(6, 1);  // starts making step 7 in the background
  EXPECT_THAT(baton_test::error_of<std::runtime_error>([&] { prefetcher.inputs(7, 0); }),
              ::testing::HasSubstr("step 7 cannot be read"));
  EXPECT_EQ(first_input(prefetcher.inputs(8, 0)), 800.0f);
}

TEST(BatchPrefetcher, DropsWhatTheRankDoesNotUse) {
  CountingSource source;
  baton_models::BatchPrefetcher inputs_only(source, 2, true, false);
  EXPECT_EQ(inputs_only.inputs(1, 0).size(), 1u);
  EXPECT_FALSE(inputs_only.targets(1, 1).defined());
  baton_models::BatchPrefetcher targets_only(source, 2, false, true);
  EXPECT_TRUE(targets_only.inputs(1, 0).empty());
  EXPECT_TRUE(targets_only.targets(1, 1).defined());
}

TEST(BatchPrefetcher, WithNothingAheadMakesEachMicrobatchWhenAskedForIt) {
  CountingSource source;
  baton_models::BatchPrefetcher prefetcher(source, 4, true, true, 0);
  for (int microbatch = 0; microbatch < 4; ++microbatch) {
    EXPECT_EQ(first_input(prefetcher.inputs(2, microbatch)),
              static_cast<float>(200 + 2 * microbatch));
    EXPECT_EQ(prefetcher.made(), microbatch + 1);  // nothing made ahead
  }
  // The targets were kept with their microbatch until taken.
  for (int microbatch = 0; microbatch < 4; ++microbatch) {
    EXPECT_EQ(prefetcher.targets(2, microbatch)[0].item<std::int64_t>(), -(200 + 2 * microbatch));
  }
  EXPECT_EQ(prefetcher.made(), 4);
  // A part asked for again is made again, the same.
  EXPECT_EQ(first_input(prefetcher.inputs(2, 3)), 206.0f);
  EXPECT_THAT(baton_test::error_of<std::runtime_error>([&] { prefetcher.inputs(7, 0); }),
              ::testing::HasSubstr("step 7 cannot be read"));
}

TEST(BatchPrefetcher, RefusesABatchTheMicrobatchesDoNotDivide) {
  CountingSource source;
  EXPECT_THAT(baton_test::error_of<baton::Error>(
                  [&] { baton_models::BatchPrefetcher prefetcher(source, 3); }),
              ::testing::HasSubstr("a batch of 8 rows does not split into 3 microbatches"));
}

}  // namespace
