// The csv schedule: a plan written with write_plan_csv (compute-only or lowered) comes back
// through the plugin unchanged; a file whose shape differs from the run's is refused naming what
// differs; a missing file or parameter is named clearly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "baton/error.h"
#include "baton/plan/csv.h"
#include "baton/plan/lower.h"
#include "baton/plan/validate.h"
#include "error_of.h"
#include "schedule_fixture.h"

namespace baton {
namespace testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class CsvSchedule : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/baton-csv-schedule-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string& file : files_) std::remove(file.c_str());
    rmdir(dir_.c_str());
  }

  std::string write(const Plan& plan, const std::string& name) {
    const std::string path = dir_ + "/" + name;
    write_plan_csv(plan, path);
    files_.push_back(path);
    return path;
  }

  static Plan build(const std::string& schedule, const ScheduleShape& shape) {
    const LoadedSchedule loaded = load_schedule(schedule);
    loaded->check(shape);
    return loaded->build(shape);
  }

  // Everything but the name, which becomes "csv".
  static void expect_same_plan(const Plan& loaded, const Plan& original) {
    EXPECT_EQ(loaded.schedule_name, "csv");
    EXPECT_EQ(loaded.num_ranks, original.num_ranks);
    EXPECT_EQ(loaded.num_stages, original.num_stages);
    EXPECT_EQ(loaded.num_microbatches, original.num_microbatches);
    EXPECT_EQ(loaded.placement, original.placement);
    EXPECT_EQ(loaded.stage_to_rank, original.stage_to_rank);
    EXPECT_EQ(loaded.rank_steps, original.rank_steps);
  }

  std::string dir_;
  std::vector<std::string> files_;
};

struct RoundTripCase {
  std::string schedule;
  ScheduleShape shape;
};

const RoundTripCase kRoundTrips[] = {
    {"gpipe", {1, 1, 1}},      {"1f1b", {4, 1, 8}},        {"interleaved_1f1b", {4, 2, 8}},
    {"looped_bfs", {3, 3, 5}}, {"zero_bubble", {4, 1, 6}}, {"zero_bubble", {2, 3, 4}},
    {"zbv", {4, 2, 5}},        {"dualpipev", {3, 2, 9}},
};

TEST_F(CsvSchedule, ComputeOnlyPlansComeBackUnchanged) {
  for (const RoundTripCase& c : kRoundTrips) {
    SCOPED_TRACE(c.schedule + " " + shape_text(c.shape));
    const Plan original = build(c.schedule, c.shape);
    const LoadedSchedule csv =
        load_schedule("csv", {{"path", write(original, c.schedule + ".csv")}});
    ASSERT_NO_THROW(csv->check(c.shape));
    const Plan loaded = csv->build(c.shape);
    expect_same_plan(loaded, original);
    EXPECT_FALSE(loaded.has_comms());
  }
}

TEST_F(CsvSchedule, LoweredPlansComeBackWithTheirComms) {
  for (const RoundTripCase& c : kRoundTrips) {
    SCOPED_TRACE(c.schedule + " " + shape_text(c.shape));
    const Plan original = lower(build(c.schedule, c.shape));
    const LoadedSchedule csv =
        load_schedule("csv", {{"path", write(original, c.schedule + "-lowered.csv")}});
    ASSERT_NO_THROW(csv->check(c.shape));
    const Plan loaded = csv->build(c.shape);
    expect_same_plan(loaded, original);
    EXPECT_EQ(loaded.has_comms(), c.shape.ranks > 1);
    EXPECT_NO_THROW(check_can_complete(loaded));
  }
}

TEST_F(CsvSchedule, RefusesAShapeThatDiffersNamingWhatDiffers) {
  const std::string path = write(build("1f1b", {4, 1, 8}), "1f1b.csv");
  const LoadedSchedule csv = load_schedule("csv", {{"path", path}});
  auto refusal = [&](const ScheduleShape& shape) -> std::string {
    try {
      csv->check(shape);
    } catch (const ConfigError& error) {
      return error.what();
    }
    ADD_FAILURE() << "accepted " << shape_text(shape);
    return {};
  };

  EXPECT_EQ(refusal({4, 1, 6}), "csv needs the plan in \"" + path +
                                    "\" to match the pipeline shape: got microbatches: the file "
                                    "has 8, the run asks for 6; 0F6 at rank 0, step 9 (row 1, "
                                    "column 10) names microbatch 6 (the run has 0..5)");
  // 2 ranks x 2 stages is the file's stage count: only the ranks differ.
  EXPECT_THAT(refusal({2, 2, 8}),
              AllOf(HasSubstr("got ranks: the file has 4, the run asks for 2"),
                    Not(HasSubstr("stages:")), Not(HasSubstr("microbatches:"))));
  EXPECT_THAT(refusal({4, 2, 4}),
              AllOf(HasSubstr("stages: the file has 4, the run asks for 8 (4 ranks x 2 stages per "
                              "rank)"),
                    HasSubstr("microbatches: the file has 8, the run asks for 4"),
                    Not(HasSubstr("ranks: the file"))));
  EXPECT_THAT(baton_test::error_of<ConfigError>([&] {
                csv->build({4, 1, 6});
              }),
              ::testing::HasSubstr("the file has 8, the run asks for 6"));
}

// A 1F1B order in PyTorch's CSV format with one cell wrong, the kind of slip a hand edit
// makes: rank 3 runs 3F8 where 3F7 belongs. Refused naming that cell, rank and step.
TEST_F(CsvSchedule, AFaultyOrderIsRefusedNamingTheCell) {
  const std::string path = dir_ + "/faulty-1f1b.csv";
  {
    std::ofstream out(path);
    out << "0F0,0F1,0F2,0F3,0B0,0F4,0B1,0F5,0B2,0F6,0B3,0F7,0B4,0B5,0B6,0B7\n"
           "1F0,1F1,1F2,1B0,1F3,1B1,1F4,1B2,1F5,1B3,1F6,1B4,1F7,1B5,1B6,1B7\n"
           "2F0,2F1,2B0,2F2,2B1,2F3,2B2,2F4,2B3,2F5,2B4,2F6,2B5,2F7,2B6,2B7\n"
           "3F0,3B0,3F1,3B1,3F2,3B2,3F3,3B3,3F4,3B4,3F5,3B5,3F6,3B6,3F8,3B7\n";
  }
  const LoadedSchedule csv = load_schedule("csv", {{"path", path}});
  try {
    csv->check({4, 1, 8});
    ADD_FAILURE() << "the faulty order was accepted";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("3F8 at rank 3, step 14 (row 4, column 15) names "
                                        "microbatch 8 (the run has 0..7)"));
  }
}

// A missing plan file is a configuration mistake, found when the parameters are read (the
// key is a `file`), naming the key; a file removed after that is named by the plugin.
TEST_F(CsvSchedule, NamesAMissingFile) {
  const std::string path = dir_ + "/no-such-plan.csv";
  try {
    load_schedule("csv", {{"path", path}});
    FAIL() << "a missing file was accepted";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()), "schedule.params.path: '" + path + "' does not exist");
  }
  const std::string removed = dir_ + "/removed-plan.csv";
  std::ofstream(removed) << "rank,action\n";
  const LoadedSchedule csv = load_schedule("csv", {{"path", removed}});
  std::remove(removed.c_str());
  try {
    csv->check({2, 1, 2});
    FAIL() << "a removed file was accepted";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()), "csv: cannot open the plan file \"" + removed +
                                             "\" (parameter 'path'): No such file or directory");
  }
}

TEST_F(CsvSchedule, PathIsARequiredParameter) {
  try {
    load_schedule("csv");
    FAIL() << "the csv schedule loaded without a path";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("path"));
  }
}

TEST_F(CsvSchedule, AMalformedFileIsAPlanErrorNamingTheCell) {
  const std::string path = dir_ + "/bad.csv";
  files_.push_back(path);
  std::ofstream(path) << "0F0,0B0\n1F0,1X0\n";
  const LoadedSchedule csv = load_schedule("csv", {{"path", path}});
  try {
    csv->check({2, 1, 1});
    FAIL() << "a malformed file was accepted";
  } catch (const PlanError& error) {
    EXPECT_THAT(error.what(), AllOf(HasSubstr(path), HasSubstr("line 2"), HasSubstr("1X0")));
  }
}

}  // namespace
}  // namespace testing
}  // namespace baton
