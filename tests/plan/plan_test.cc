#include "baton/plan/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "baton/error.h"
#include "error_of.h"
#include "plan_builders.h"

namespace baton {
namespace {

TEST(PlanTest, LoopPlacementWrapsAround) {
  EXPECT_EQ(place_stages(Placement::kLoop, 4, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(place_stages(Placement::kLoop, 2, 6), (std::vector<int>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(place_stages(Placement::kLoop, 3, 2), (std::vector<int>{0, 1}));
}

TEST(PlanTest, VPlacementZigZags) {
  EXPECT_EQ(place_stages(Placement::kV, 4, 8), (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(place_stages(Placement::kV, 2, 8), (std::vector<int>{0, 1, 1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(place_stages(Placement::kV, 1, 2), (std::vector<int>{0, 0}));
}

TEST(PlanTest, PlacementRejectsWhatItCannotPlace) {
  EXPECT_THAT(baton_test::error_of<PlanError>([&] { place_stages(Placement::kV, 4, 6); }),
              ::testing::HasSubstr("placement \"v\" needs the stage count to be a multiple of 2 x "
                                   "ranks (8), got 6 stages on 4 ranks"));
  EXPECT_THAT(
      baton_test::error_of<PlanError>([&] { place_stages(Placement::kCustom, 2, 2); }),
      ::testing::HasSubstr("placement \"custom\" has no formula; give stage_to_rank explicitly"));
  EXPECT_THAT(baton_test::error_of<PlanError>([&] { place_stages(Placement::kLoop, 0, 2); }),
              ::testing::HasSubstr("cannot place 2 stages on 0 ranks: need at least one rank"));
  try {
    place_stages(Placement::kV, 4, 6);
  } catch (const PlanError& error) {
    EXPECT_NE(std::string(error.what()).find("multiple of 2 x ranks (8), got 6 stages on 4 ranks"),
              std::string::npos)
        << error.what();
  }
}

TEST(PlanTest, ClassifyPlacementRecognisesNamedLayouts) {
  EXPECT_EQ(classify_placement({0, 1, 0, 1}, 2), Placement::kLoop);
  EXPECT_EQ(classify_placement({0, 1, 1, 0}, 2), Placement::kV);
  EXPECT_EQ(classify_placement({1, 0}, 2), Placement::kCustom);
  EXPECT_EQ(classify_placement({0, 0, 1, 1}, 2), Placement::kCustom);
  // One stage per rank is both loop and a degenerate V; loop wins.
  EXPECT_EQ(classify_placement({0}, 1), Placement::kLoop);
}

TEST(PlanTest, PlacementNames) {
  EXPECT_EQ(placement_name(Placement::kLoop), "loop");
  EXPECT_EQ(placement_name(Placement::kV), "v");
  EXPECT_EQ(placement_name(Placement::kCustom), "custom");
}

TEST(PlanTest, HasCommsAndNumSteps) {
  const Plan compute =
      testing::plan_from_text(2, 1, Placement::kLoop, {{"0F0", "", "", "0B0"}, {"", "1F0", "1B0"}});
  EXPECT_FALSE(compute.has_comms());
  EXPECT_EQ(compute.num_steps(), 4);
  const Plan lowered = testing::plan_from_text(
      2, 1, Placement::kLoop,
      {{"0F0", "0SEND_F0", "0RECV_B0", "0B0"}, {"1RECV_F0", "1F0", "1B0", "1SEND_B0"}});
  EXPECT_TRUE(lowered.has_comms());
  EXPECT_EQ(Plan().num_steps(), 0);
}

}  // namespace
}  // namespace baton
