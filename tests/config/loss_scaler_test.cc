// LossScaler against torch.cuda.amp.GradScaler.update()'s rule (_amp_update_scale_): halve
// and restart the count on an overflow, double after growth_interval finite steps in a row,
// never grow past float32's range; and DeepSpeed's floor: an overflow at the minimum stops.
#include "training/loss_scaler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "baton/error.h"

namespace {

using baton_app::LossScaler;
using baton_app::LossScaleSettings;

LossScaleSettings dynamic(double init, std::int64_t interval, double min = 1.0) {
  LossScaleSettings settings;
  settings.enabled = true;
  settings.init = init;
  settings.growth_interval = interval;
  settings.min = min;
  return settings;
}

TEST(LossScaler, FollowsGradScalersUpdate) {
  LossScaler scaler(dynamic(65536, 3));
  std::vector<double> scales;
  // finite x3 (grows), overflow (halves, count restarts), finite x2, overflow, finite x3.
  const std::vector<bool> overflows = {false, false, false, true,  false,
                                       false, true,  false, false, false};
  int step = 0;
  for (const bool overflow : overflows) {
    scales.push_back(scaler.scale());
    EXPECT_EQ(scaler.update(overflow, ++step), overflow) << "step " << step;
  }
  EXPECT_EQ(scales, (std::vector<double>{65536, 65536, 65536, 131072, 65536, 65536, 65536, 32768,
                                         32768, 32768}));
  EXPECT_EQ(scaler.scale(), 65536);
  EXPECT_EQ(scaler.state().skipped_steps, 2);
  EXPECT_EQ(scaler.state().growth_tracker, 0);
}

TEST(LossScaler, NeverGrowsPastFloat32) {
  LossScaler scaler(dynamic(0x1p127, 1));
  EXPECT_FALSE(scaler.update(false, 1));
  EXPECT_EQ(scaler.scale(), 0x1p127);  // 2^128 is an inf in float32, as GradScaler keeps it
}

TEST(LossScaler, StopsAtAnOverflowAtTheMinimum) {
  LossScaler scaler(dynamic(4, 2000, 2));
  EXPECT_TRUE(scaler.update(true, 1));
  EXPECT_EQ(scaler.scale(), 2);
  try {
    scaler.update(true, 2);
    FAIL() << "an overflow at the minimum went on";
  } catch (const baton::Error& error) {
    EXPECT_THAT(error.what(), testing::HasSubstr("step 2: a gradient is an inf or a nan at the "
                                                 "lowest loss scale (2"));
    EXPECT_THAT(error.what(), testing::HasSubstr("after 1 skipped step in the run"));
  }
}

TEST(LossScaler, OffScalesByOneAndSkipsNothing) {
  LossScaler scaler(LossScaleSettings{});
  EXPECT_EQ(scaler.scale(), 1.0);
  EXPECT_FALSE(scaler.update(true, 1));
}

TEST(LossScaler, ARestoredStateGoesOnFromWhereItWas) {
  LossScaler scaler(dynamic(65536, 2));
  scaler.restore({1024, 1, 7});
  EXPECT_EQ(scaler.scale(), 1024);
  EXPECT_FALSE(scaler.update(false, 9));
  EXPECT_EQ(scaler.scale(), 2048);
  EXPECT_EQ(scaler.state().skipped_steps, 7);
}

}  // namespace
