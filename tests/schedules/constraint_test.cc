// Each schedule refuses the shapes it cannot plan with a ConfigError that names the rule and the
// values given, in the one format every schedule shares: "<schedule> needs <rule>: got <values>".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "baton/error.h"
#include "schedule_fixture.h"

namespace baton {
namespace testing {
namespace {

using ::testing::HasSubstr;

// The message check() throws for `shape`; fails the test when it accepts the shape.
std::string refusal(const std::string& name, const ScheduleShape& shape) {
  const LoadedSchedule schedule = load_schedule(name);
  try {
    schedule->check(shape);
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << name << " accepted " << shape_text(shape);
  return {};
}

TEST(ScheduleConstraints, EveryScheduleNeedsAPositiveShape) {
  for (const ScheduleSpec& spec : built_in_schedules()) {
    EXPECT_EQ(refusal(spec.name, {0, 1, 4}), spec.name + " needs ranks >= 1: got 0 ranks");
    EXPECT_EQ(refusal(spec.name, {2, 0, 4}),
              spec.name + " needs stages_per_rank >= 1: got 0 stages per rank");
    EXPECT_EQ(refusal(spec.name, {2, 2, 0}),
              spec.name + " needs microbatches >= 1: got 0 microbatches");
  }
}

TEST(ScheduleConstraints, GPipeNeedsOneStagePerRank) {
  EXPECT_EQ(refusal("gpipe", {4, 2, 8}),
            "gpipe needs stages_per_rank == 1 (one stage per rank; use looped_bfs for several): "
            "got 2 stages per rank");
}

TEST(ScheduleConstraints, OneFOneBNeedsOneStagePerRankAndAMicrobatchPerRank) {
  EXPECT_EQ(refusal("1f1b", {4, 1, 2}),
            "1f1b needs microbatches >= ranks (stages): got 2 microbatches for 4 ranks");
  EXPECT_EQ(refusal("1f1b", {4, 1, 1}),
            "1f1b needs microbatches >= ranks (stages): got 1 microbatch for 4 ranks");
  EXPECT_EQ(refusal("1f1b", {2, 3, 8}),
            "1f1b needs stages_per_rank == 1 (one stage per rank; use interleaved_1f1b for "
            "several): got 3 stages per rank");
}

TEST(ScheduleConstraints, ZbvNeedsExactlyTwoStagesPerRank) {
  const std::string rule =
      "zbv needs stages_per_rank == 2 (exactly 2: one on the way down and one back up the "
      "\"v\"): got ";
  EXPECT_EQ(refusal("zbv", {4, 1, 8}), rule + "1 stage per rank");
  EXPECT_EQ(refusal("zbv", {4, 3, 8}), rule + "3 stages per rank");
}

TEST(ScheduleConstraints, DualPipeVNeedsTwoStagesPerRankAndAMicrobatchPerStage) {
  EXPECT_EQ(refusal("dualpipev", {4, 2, 7}),
            "dualpipev needs microbatches >= 2 x ranks (the number of stages): got 7 "
            "microbatches for 4 ranks (8 stages)");
  EXPECT_THAT(refusal("dualpipev", {4, 1, 8}),
              HasSubstr("dualpipev needs stages_per_rank == 2 (exactly 2"));
}

// Looped BFS, interleaved 1F1B and zero bubble plan any positive shape, including microbatch
// counts Megatron (m % r != 0) and PyTorch (m % max(1, m / r) != 0) refuse.
TEST(ScheduleConstraints, LoopedAndInterleavedSchedulesTakeAnyPositiveShape) {
  for (const std::string name : {"looped_bfs", "interleaved_1f1b", "zero_bubble"}) {
    const LoadedSchedule schedule = load_schedule(name);
    for (const ScheduleShape& shape : {ScheduleShape{8, 4, 1}, ScheduleShape{3, 3, 7},
                                       ScheduleShape{4, 2, 9}, ScheduleShape{8, 3, 25}}) {
      EXPECT_NO_THROW(schedule->check(shape)) << name << " " << shape_text(shape);
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace baton
