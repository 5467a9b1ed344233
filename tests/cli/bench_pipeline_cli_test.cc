// `baton bench pipeline` as a user runs it, small: real rank processes, the unpipelined
// references, the printed fields and their relations — never the speeds themselves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <regex>
#include <string>

#include "run_command.h"

namespace {

using baton_test::run_command;
using testing::ContainsRegex;
using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;
const std::string kSource = BATON_SOURCE_DIR;
// The reference workloads, shrunk so that a run takes seconds.
const std::string kSmall =
    " --set model.params.in_features=64 --set model.params.hidden=64 --steps 3 --warmup 1"
    " --timeout 120";

double number(const std::string& json, const std::string& key) {
  std::smatch match;
  const std::regex pattern("\"" + key + "\": (-?[0-9.e+-]+)");
  if (!std::regex_search(json, match, pattern)) {
    ADD_FAILURE() << "no \"" << key << "\" in " << json;
    return -1;
  }
  return std::stod(match[1]);
}

TEST(CliBenchPipeline, JsonHasEveryFigureAndTheyAgree) {
  const auto result = run_command("cd '" + kSource + "' && timeout -k 5 200 " + kBaton +
                                  " bench pipeline configs/bench-mlp-1f1b.yaml --format json" +
                                  kSmall + " 2>/dev/null");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string& json = result.output;
  for (const char* key : {"real_ms", "predicted_ms", "unpipelined_ms", "unpipelined_concurrent_ms",
                          "bound_ms", "transfer_ms"}) {
    EXPECT_GT(number(json, key), 0) << key;
  }
  EXPECT_NEAR(number(json, "efficiency"), number(json, "predicted_ms") / number(json, "real_ms"),
              2e-3);
  EXPECT_NEAR(number(json, "speedup"), number(json, "unpipelined_ms") / number(json, "real_ms"),
              2e-3);
  EXPECT_EQ(number(json, "measured_steps"), 3);
  // 4 x Linear(64, 64) cut in two: stage 0's output is [8, 64] float32 per microbatch.
  EXPECT_EQ(number(json, "transfer_bytes"), 8 * 64 * 4);
  for (const char* action : {"\"stage\": 0, \"type\": \"F\"", "\"stage\": 0, \"type\": \"B\"",
                             "\"stage\": 1, \"type\": \"F\"", "\"stage\": 1, \"type\": \"B\""}) {
    EXPECT_THAT(json, HasSubstr(action));
  }
  // Every action of 3 measured steps was timed: 8 microbatches x 3 steps.
  EXPECT_THAT(json, HasSubstr("\"type\": \"F\", \"ms\""));
  EXPECT_THAT(json, ContainsRegex("\"type\": \"B\", \"ms\": [0-9.]+, \"samples\": 24"));
  EXPECT_THAT(json, HasSubstr("{\"rank\": 1, \"compute_ms\""));
}

TEST(CliBenchPipeline, InterleavedTableShowsEveryStage) {
  const auto result =
      run_command("cd '" + kSource + "' && timeout -k 5 200 " + kBaton +
                  " bench pipeline configs/bench-mlp-interleaved.yaml" + kSmall + " 2>&1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* text :
       {"interleaved_1f1b, 2 ranks, 4 stages, 8 microbatches", "real_ms", "predicted_ms",
        "unpipelined_concurrent_ms", "efficiency", "speedup", " 3F ", " 3B ", "rank 1 "}) {
    EXPECT_THAT(result.output, HasSubstr(text));
  }
}

TEST(CliBenchPipeline, AFailingRankIsReportedWithItsOwnWords) {
  const auto result = run_command("cd '" + kSource + "' && timeout -k 5 200 " + kBaton +
                                  " bench pipeline configs/bench-mlp-1f1b.yaml" + kSmall +
                                  " --set data.source=nosuch 2>&1");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.output, HasSubstr("bench pipeline: the pipelined run failed"));
  EXPECT_THAT(result.output, HasSubstr("data.source 'nosuch' is unknown"));
}

TEST(CliBenchPipeline, OneRankIsRefused) {
  const auto result = run_command(kBaton + " bench pipeline --set world.ranks=1 2>&1");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.output, HasSubstr("at least 2 ranks"));
}

}  // namespace

namespace {

TEST(CliBenchSweep, EveryPointRunsAndThePicturesAreWritten) {
  const std::string out = ::testing::TempDir() + "/sweep-" + std::to_string(::getpid());
  const auto result = baton_test::run_command(
      "cd '" + kSource + "' && timeout -k 5 200 " + kBaton +
      " bench sweep configs/bench-mlp-1f1b.yaml --set model.params.in_features=32"
      " --set model.params.hidden=32 --schedules gpipe,1f1b,zbv:2 --microbatches 2,4"
      " --steps 2 --warmup 1 --format json --timeout 150 --out '" +
      out + "' 2>/dev/null");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // 3 schedules x 2 counts, each with the executor's own count of activations held equal to
  // the simulator's (GPipe holds every microbatch; 1F1B at most as many as ranks ahead).
  for (const char* point : {"\"schedule\": \"gpipe\", \"stages_per_rank\": 1, \"microbatches\": 4",
                            "\"schedule\": \"1f1b\", \"stages_per_rank\": 1, \"microbatches\": 2",
                            "\"schedule\": \"zbv\", \"stages_per_rank\": 2, \"microbatches\": 4"}) {
    EXPECT_THAT(result.output, HasSubstr(point));
  }
  EXPECT_THAT(result.output,
              HasSubstr("\"peak_activations\": [4, 4], \"measured_activations\": [4, 4]"));
  EXPECT_THAT(result.output,
              HasSubstr("\"peak_activations\": [2, 1], \"measured_activations\": [2, 1]"));
  EXPECT_THAT(result.output, HasSubstr("\"bytes_per_activation\""));
  EXPECT_THAT(result.output, HasSubstr("\"peak_heap_bytes\": ["));
  for (const char* picture : {"/step_time.svg", "/memory.svg"}) {
    const auto svg = baton_test::run_command("head -c 200 '" + out + picture + "'");
    EXPECT_THAT(svg.output, HasSubstr("<svg")) << picture;
  }
}

TEST(CliBenchSweep, BadListsAreUsageErrors) {
  const auto result = baton_test::run_command(kBaton + " bench sweep --schedules 1f1b:0 2>&1");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.output, HasSubstr("NAME or NAME:STAGES_PER_RANK"));
  const auto counts = baton_test::run_command(kBaton + " bench sweep --microbatches 4,x 2>&1");
  EXPECT_EQ(counts.exit_code, 2);
  EXPECT_THAT(counts.output, HasSubstr("'x' is not a count"));
}

}  // namespace
