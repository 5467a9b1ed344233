#include "baton/plan/csv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "baton/error.h"
#include "baton/plan/lower.h"
#include "plan_builders.h"

namespace baton {
namespace {

using testing::plan_from_text;
using testing::plan_text;

std::string csv_error(std::string_view text, std::string_view source = {}) {
  try {
    plan_from_csv(text, source);
  } catch (const PlanError& error) {
    return error.what();
  }
  ADD_FAILURE() << "CSV parsed without error:\n" << text;
  return {};
}

Plan compute_plan_with_idle_steps() {
  return plan_from_text(2, 2, Placement::kLoop,
                        {{"0F0", "0F1", "", "", "0B0", "0B1"}, {"", "1F0", "1F1", "1B0", "1B1"}});
}

TEST(CsvTest, WritesOneLinePerRankWithEmptyIdleCells) {
  EXPECT_EQ(plan_to_csv(compute_plan_with_idle_steps()),
            "0F0,0F1,,,0B0,0B1\n"
            ",1F0,1F1,1B0,1B1\n");
}

TEST(CsvTest, ComputeOnlyRoundTrip) {
  const Plan original = compute_plan_with_idle_steps();
  const Plan loaded = plan_from_csv(plan_to_csv(original));
  EXPECT_EQ(plan_text(loaded), plan_text(original));
  EXPECT_EQ(loaded.num_ranks, 2);
  EXPECT_EQ(loaded.num_stages, 2);
  EXPECT_EQ(loaded.num_microbatches, 2);
  EXPECT_EQ(loaded.placement, Placement::kLoop);
  EXPECT_EQ(loaded.stage_to_rank, (std::vector<int>{0, 1}));
  EXPECT_FALSE(loaded.has_comms());
}

TEST(CsvTest, ComputeCommsRoundTrip) {
  const Plan lowered = lower(testing::one_f_one_b_plan(4, 6));
  const std::string csv = plan_to_csv(lowered);
  const Plan loaded = plan_from_csv(csv);
  EXPECT_EQ(plan_text(loaded), plan_text(lowered));
  EXPECT_TRUE(loaded.has_comms());
  EXPECT_EQ(loaded.num_stages, 4);
  EXPECT_EQ(loaded.num_microbatches, 6);
  EXPECT_EQ(plan_to_csv(loaded), csv);
}

TEST(CsvTest, RoundTripKeepsOverlapAndShardingActions) {
  const Plan plan = plan_from_text(4, 2, Placement::kV,
                                   {{"0UNSHARD", "0F0", "(3F1;3B0)OVERLAP_F_B", "", "0REDUCE_GRAD"},
                                    {"1F0", "2F0", "2RESHARD"}});
  const Plan loaded = plan_from_csv(plan_to_csv(plan));
  EXPECT_EQ(plan_text(loaded), plan_text(plan));
  EXPECT_EQ(loaded.num_stages, 4);
  EXPECT_EQ(loaded.placement, Placement::kV);
  EXPECT_EQ(loaded.stage_to_rank, (std::vector<int>{0, 1, 1, 0}));
}

TEST(CsvTest, ReadsWhatPythonsCsvWriterProduces) {
  // Python's csv.writer ends lines with "\r\n" and writes a row holding one None as "".
  const Plan loaded = plan_from_csv(
      "\xEF\xBB\xBF"
      "0F0,0B0\r\n\"\"\r\n 1F0 , \"1B0\"\r\n");
  EXPECT_EQ(plan_text(loaded),
            (std::vector<std::vector<std::string>>{{"0F0", "0B0"}, {""}, {"1F0", "1B0"}}));
  EXPECT_EQ(loaded.num_ranks, 3);
  EXPECT_EQ(loaded.placement, Placement::kCustom);
  EXPECT_EQ(loaded.stage_to_rank, (std::vector<int>{0, 2}));
}

TEST(CsvTest, SingleIdleStepAndEmptyRankStayDistinct) {
  Plan plan = plan_from_text(1, 1, Placement::kLoop, {{"0F0", "0B0"}});
  plan.num_ranks = 3;
  plan.rank_steps.push_back({std::nullopt});
  plan.rank_steps.push_back({});
  const std::string csv = plan_to_csv(plan);
  EXPECT_EQ(csv, "0F0,0B0\n\"\"\n\n");
  const Plan loaded = plan_from_csv(csv);
  ASSERT_EQ(loaded.rank_steps.size(), 3u);
  EXPECT_EQ(loaded.rank_steps[1].size(), 1u);
  EXPECT_EQ(loaded.rank_steps[2].size(), 0u);
}

TEST(CsvTest, InfersPlacement) {
  EXPECT_EQ(plan_from_csv("0F0,2F0\n1F0,3F0\n").placement, Placement::kLoop);
  EXPECT_EQ(plan_from_csv("0F0,3F0\n1F0,2F0\n").placement, Placement::kV);
  const Plan custom = plan_from_csv("0F0,1F0\n2F0,3F0\n");
  EXPECT_EQ(custom.placement, Placement::kCustom);
  EXPECT_EQ(custom.stage_to_rank, (std::vector<int>{0, 0, 1, 1}));
}

TEST(CsvTest, ErrorsNameLineAndColumn) {
  const std::string message = csv_error("0F0,0F1\n1F0,1X1,1B0\n", "sched.csv");
  EXPECT_NE(message.find("invalid action \"1X1\" at sched.csv: line 2 (rank 1), column 2 (step 1)"),
            std::string::npos)
      << message;
}

TEST(CsvTest, StageComputingOnTwoRanksNamesBoth) {
  const std::string message = csv_error("0F0,1F0\n1B0\n");
  EXPECT_NE(message.find("stage 1 computes on rank 0 (line 1, column 2: 1F0) and on rank 1 (line "
                         "2, column 1: 1B0)"),
            std::string::npos)
      << message;
}

TEST(CsvTest, OtherMalformedInput) {
  EXPECT_NE(csv_error("").find("no lines"), std::string::npos);
  EXPECT_NE(csv_error("0F0,\"1F0\n").find("line 1: a quoted cell is never closed"),
            std::string::npos);
  EXPECT_NE(csv_error("0F0,2F0\n").find("stage 1 never runs F, B, I or W"), std::string::npos);
}

// A typo'd huge stage or microbatch number fails at its cell, before anything is sized by it
// (the fuzzer found "0F016161515" sizing the validator's tables at 2 GB).
TEST(CsvTest, NumbersPastTheShapeLimitsNameTheirCell) {
  std::string message = csv_error("0F0,900000000F0\n", "typo.csv");
  EXPECT_NE(message.find("typo.csv: line 1 (rank 0), column 2 (step 1): stage 900000000 in "
                         "'900000000F0' is past baton's limit of 1048576 stages"),
            std::string::npos)
      << message;
  message = csv_error("0F016161515\n");
  EXPECT_NE(message.find("microbatch 16161515 in '0F016161515' is past baton's limit of 65536 "
                         "microbatches"),
            std::string::npos)
      << message;
  EXPECT_EQ(plan_from_csv("0F65535\n").num_microbatches, 65536);
}

TEST(CsvTest, FileRoundTripAndMissingFile) {
  char path[] = "/tmp/baton_plan_csv_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  const Plan original = compute_plan_with_idle_steps();
  write_plan_csv(original, path);
  EXPECT_EQ(plan_text(read_plan_csv(path)), plan_text(original));
  std::remove(path);
  try {
    read_plan_csv(path);
    FAIL() << "reading a missing file succeeded";
  } catch (const PlanError& error) {
    EXPECT_NE(std::string(error.what()).find(std::string("cannot read plan CSV '") + path),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace baton
