// `baton bench pipeline` as a user runs it, small: real rank processes, the unpipelined
// references, the printed fields and their relations — never the speeds themselves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_command.h"

namespace {

using baton_test::run_command;
using baton_test::run_command_stdout;
using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;
const std::string kSource = BATON_SOURCE_DIR;
// The reference workloads, shrunk so that a run takes seconds.
const std::string kSmall =
    " --set model.params.in_features=64 --set model.params.hidden=64 --steps 3 --warmup 1"
    " --timeout 120";

// A figure of the bench's JSON; a missing or non-numeric one fails the test.
double number(const nlohmann::json& json, const std::string& key) {
  if (!json.contains(key) || !json[key].is_number()) {
    ADD_FAILURE() << "no number \"" << key << "\" in " << json.dump();
    return -1;
  }
  return json[key].get<double>();
}

TEST(CliBenchPipeline, JsonHasEveryFigureAndTheyAgree) {
  const auto result =
      run_command_stdout("cd '" + kSource + "' && timeout -k 5 200 " + kBaton +
                         " bench pipeline configs/bench-mlp-1f1b.yaml --format json" + kSmall);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json json = nlohmann::json::parse(result.output, nullptr, false);
  ASSERT_TRUE(json.is_object()) << result.output;
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
  // Every action of 3 measured steps was timed: 8 microbatches x 3 steps, on both stages.
  std::set<std::pair<int, std::string>> timed;
  for (const auto& cost : json["action_costs"]) {
    timed.emplace(cost["stage"].get<int>(), cost["type"].get<std::string>());
    EXPECT_GE(number(cost, "ms"), 0) << cost.dump();
    if (cost["type"] == "B") {
      EXPECT_EQ(cost["samples"], 24) << cost.dump();
    }
  }
  for (const auto& action :
       std::set<std::pair<int, std::string>>{{0, "F"}, {0, "B"}, {1, "F"}, {1, "B"}}) {
    EXPECT_TRUE(timed.count(action)) << action.first << action.second;
  }
  ASSERT_EQ(json["breakdown"].size(), 2u);
  EXPECT_EQ(json["breakdown"][1]["rank"], 1);
  EXPECT_GT(number(json["breakdown"][1], "compute_ms"), 0);
}

// --baseline: the same step with other settings, measured first in the same run; each
// headline figure is given for both with their ratio. Here the wire: bf16 halves the bytes a
// stage-boundary message carries, exactly.
TEST(CliBenchPipeline, ABaselineIsMeasuredFirstAndComparedFigureByFigure) {
  const auto result = run_command_stdout(
      "cd '" + kSource + "' && timeout -k 5 300 " + kBaton +
      " bench pipeline configs/bench-mlp-1f1b.yaml --format json --set precision.wire=bf16"
      " --baseline precision.wire=fp32" +
      kSmall);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json json = nlohmann::json::parse(result.output, nullptr, false);
  ASSERT_TRUE(json.is_object()) << result.output;
  EXPECT_EQ(json["baseline_settings"], nlohmann::json::array({"precision.wire=fp32"}));
  EXPECT_EQ(number(json["measured"], "transfer_bytes"), 8 * 64 * 2);
  EXPECT_EQ(number(json["baseline"], "transfer_bytes"), 8 * 64 * 4);
  EXPECT_NEAR(number(json["ratio"], "transfer_bytes"), 0.5, 1e-9);
  EXPECT_NEAR(number(json["ratio"], "real_ms"),
              number(json["measured"], "real_ms") / number(json["baseline"], "real_ms"), 2e-3);
  EXPECT_GT(number(json["measured"], "activations_peak_bytes"), 0);
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
                                  " --set data.source=files --set data.inputs=README.md" +
                                  " --set data.targets=README.md 2>&1");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.output, HasSubstr("bench pipeline: the pipelined run failed"));
  EXPECT_THAT(result.output, HasSubstr("data.inputs ('README.md'): unknown file type"));
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
  const auto result = baton_test::run_command_stdout(
      "cd '" + kSource + "' && timeout -k 5 200 " + kBaton +
      " bench sweep configs/bench-mlp-1f1b.yaml --set model.params.in_features=32"
      " --set model.params.hidden=32 --schedules gpipe,1f1b,zbv:2 --microbatches 2,4"
      " --steps 2 --warmup 1 --format json --timeout 150 --out '" +
      out + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // 3 schedules x 2 counts, each with the executor's own count of activations held equal to
  // the simulator's (GPipe holds every microbatch; 1F1B at most as many as ranks ahead).
  const nlohmann::json sweep = nlohmann::json::parse(result.output, nullptr, false);
  ASSERT_TRUE(sweep.is_object()) << result.output;
  ASSERT_EQ(sweep["points"].size(), 6u) << result.output;
  const auto point = [&sweep](const std::string& schedule, int stages_per_rank, int count) {
    for (const auto& candidate : sweep["points"]) {
      if (candidate["schedule"] == schedule && candidate["stages_per_rank"] == stages_per_rank &&
          candidate["microbatches"] == count) {
        return candidate;
      }
    }
    ADD_FAILURE() << "no point " << schedule << " " << stages_per_rank << " " << count;
    return nlohmann::json::object();
  };
  for (const auto& p : sweep["points"]) {
    EXPECT_FALSE(p.contains("skipped")) << p.dump();
    EXPECT_EQ(p["peak_activations"], p["measured_activations"]) << p.dump();
    EXPECT_EQ(p["peak_heap_bytes"].size(), 2u) << p.dump();
  }
  EXPECT_EQ(point("gpipe", 1, 4)["peak_activations"], nlohmann::json({4, 4}));
  EXPECT_EQ(point("1f1b", 1, 2)["peak_activations"], nlohmann::json({2, 1}));
  point("zbv", 2, 4);
  ASSERT_EQ(sweep["fits"].size(), 2u);
  EXPECT_TRUE(sweep["fits"][0].contains("bytes_per_activation"));
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

TEST(CliBenchTune, RunsTheTopCandidatesInTurnsAndComparesThemWithTheirPredictions) {
  const std::string out = ::testing::TempDir() + "/bench-tune-" + std::to_string(::getpid());
  std::filesystem::remove_all(out);
  const auto result = baton_test::run_command_stdout(
      "cd '" + kSource + "' && timeout -k 5 200 " + kBaton +
      " bench tune configs/bench-mlp-1f1b.yaml --set model.params.in_features=32"
      " --set model.params.hidden=32 --set schedule.name=auto --set run.output_dir='" +
      out + "' --top 3 --rounds 3 --steps 4 --warmup 1 --format json --timeout 150");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json report = nlohmann::json::parse(result.output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << result.output;
  ASSERT_EQ(report["candidates"].size(), 3u) << result.output;
  double previous = 0;
  std::vector<double> even_rounds, odd_rounds;
  for (const auto& candidate : report["candidates"]) {
    // Ranked by prediction, each with a turn in every round.
    EXPECT_GE(candidate["predicted_ms"].get<double>(), previous) << candidate.dump();
    previous = candidate["predicted_ms"].get<double>();
    ASSERT_EQ(candidate["rounds_ms"].size(), 3u) << candidate.dump();
    // A turn of 4 steps counts the 3 after its first.
    std::vector<double> steps = candidate["steps_ms"].get<std::vector<double>>();
    ASSERT_EQ(steps.size(), 9u) << candidate.dump();
    for (const double step : steps) EXPECT_GT(step, 0) << candidate.dump();
    // Measured: the median of all of them; a round's figure: the median of its turn.
    const auto median = [](std::vector<double> values) {
      std::sort(values.begin(), values.end());
      const std::size_t n = values.size();
      return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    };
    EXPECT_NEAR(candidate["measured_ms"].get<double>(), median(steps), 1e-9) << candidate.dump();
    // rounds_ms are rounded to 1 µs for reading; the spread is checked against the exact
    // medians of the unrounded steps (it is rounded to 4 decimals).
    std::vector<double> rounds = candidate["rounds_ms"].get<std::vector<double>>();
    std::vector<double> exact_rounds;
    for (std::size_t round = 0; round < 3; ++round) {
      exact_rounds.push_back(
          median({steps[3 * round], steps[3 * round + 1], steps[3 * round + 2]}));
      EXPECT_NEAR(rounds[round], exact_rounds.back(), 0.5e-3 + 1e-9) << candidate.dump();
    }
    EXPECT_NEAR(candidate["spread"].get<double>(),
                *std::max_element(exact_rounds.begin(), exact_rounds.end()) /
                        *std::min_element(exact_rounds.begin(), exact_rounds.end()) -
                    1,
                0.5e-4 + 1e-9)
        << candidate.dump();
    // Where each rank's step went: its compute against the simulation's, and its transfers.
    // Measured times are only checked to exist (no clock bounds in tests: docs/testing.md).
    ASSERT_EQ(candidate["compute_ms"].size(), 2u) << candidate.dump();
    ASSERT_EQ(candidate["comm_ms"].size(), 2u) << candidate.dump();
    ASSERT_EQ(candidate["predicted_compute_ms"].size(), 2u) << candidate.dump();
    ASSERT_EQ(candidate["predicted_idle_ms"].size(), 2u) << candidate.dump();
    for (std::size_t rank = 0; rank < 2; ++rank) {
      const double compute = candidate["compute_ms"][rank].get<double>();
      const double comm = candidate["comm_ms"][rank].get<double>();
      EXPECT_GT(compute, 0) << candidate.dump();
      EXPECT_GE(comm, 0) << candidate.dump();
      // In milliseconds, like the step: a rank's simulated compute within the simulated step.
      const double predicted_compute = candidate["predicted_compute_ms"][rank].get<double>();
      EXPECT_GT(predicted_compute, 0) << candidate.dump();
      EXPECT_LE(predicted_compute, candidate["predicted_ms"].get<double>() + 1e-3)
          << candidate.dump();
      EXPECT_GE(candidate["predicted_idle_ms"][rank].get<double>(), -1e-3) << candidate.dump();
    }
    // Even rounds (0 and 2): the median of their 6 steps; odd (1): of its 3.
    even_rounds.push_back(median({steps[0], steps[1], steps[2], steps[6], steps[7], steps[8]}));
    odd_rounds.push_back(median({steps[3], steps[4], steps[5]}));
  }
  EXPECT_GE(report["typical_spread"].get<double>(), 0.0);
  const double correlation = report["rank_correlation"].get<double>();
  EXPECT_GE(correlation, -1.0);
  EXPECT_LE(correlation, 1.0);
  // The measurement against itself: Spearman of the measured step over the even rounds
  // against the odd ones, worked here.
  const auto ranks_of = [](const std::vector<double>& values) {
    std::vector<double> ranks(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      double below = 0, equal = 0;
      for (const double other : values) {
        below += other < values[i];
        equal += other == values[i];
      }
      ranks[i] = below + (equal + 1) / 2;
    }
    return ranks;
  };
  const std::vector<double> a = ranks_of(even_rounds), b = ranks_of(odd_rounds);
  double mean_a = 0, mean_b = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    mean_a += a[i] / 3;
    mean_b += b[i] / 3;
  }
  double cross = 0, square_a = 0, square_b = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    cross += (a[i] - mean_a) * (b[i] - mean_b);
    square_a += (a[i] - mean_a) * (a[i] - mean_a);
    square_b += (b[i] - mean_b) * (b[i] - mean_b);
  }
  const double repeatability =
      square_a > 0 && square_b > 0 ? cross / std::sqrt(square_a * square_b) : 0;
  EXPECT_NEAR(report["repeatability"].get<double>(), repeatability, 2e-3) << result.output;
  // --rounds as given (not the default share of the turns), and what a perfect prediction
  // would typically score against them: a rank correlation, 1 when the rounds resolve every
  // pair (each pair then holds in 97.5% of the resamples).
  EXPECT_EQ(report["rounds"].get<int>(), 3) << result.output;
  const double perfect = report["rank_correlation_of_a_perfect_prediction"].get<double>();
  EXPECT_GE(perfect, -1.0) << result.output;
  EXPECT_LE(perfect, 1.0) << result.output;
  if (report["resolved_pairs"].size() == 3) {
    EXPECT_EQ(perfect, 1.0) << result.output;
  }
  // The pairs the rounds order with confidence, and how many of them the prediction orders
  // alike, counted here from the predictions.
  EXPECT_EQ(report["pairs"].get<int>(), 3);
  std::size_t alike = 0;
  for (const auto& pair : report["resolved_pairs"]) {
    ASSERT_EQ(pair.size(), 2u) << result.output;
    const auto faster = pair[0].get<std::size_t>(), slower = pair[1].get<std::size_t>();
    ASSERT_LT(faster, 3u);
    ASSERT_LT(slower, 3u);
    EXPECT_NE(faster, slower);
    alike += report["candidates"][faster]["predicted_ms"].get<double>() <
             report["candidates"][slower]["predicted_ms"].get<double>();
  }
  EXPECT_EQ(report["resolved_pairs_predicted_alike"].get<std::size_t>(), alike) << result.output;
  EXPECT_GE(report["auto_over_best"].get<double>(), 0.0);
  EXPECT_THAT(report["transfers"].get<std::string>(), testing::StartsWith("measured: gloo"));
  EXPECT_THAT(report["transfers"].get<std::string>(), HasSubstr("while both ranks compute"));
  EXPECT_TRUE(std::filesystem::exists(report["picture"].get<std::string>())) << result.output;
  std::filesystem::remove_all(out);
}

// One rank's side of the rotation, run directly: candidates set up side by side, each timed
// in every round; and a candidate that cannot run is named with its settings.
TEST(CliBenchTune, ARotationTimesEveryCandidateAndNamesOneThatFails) {
  const std::string dir = ::testing::TempDir() + "/rotation-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string bench = std::string(BATON_BINARY) + "-bench";
  const auto rotate = [&](const std::string& candidates) {
    {
      std::ofstream plan(dir + "/plan.json", std::ios::trunc);
      plan << "{\"candidates\": " << candidates
           << ", \"warmup_steps\": 1, \"rounds\": 2, \"steps_per_turn\": 4}";
    }
    return baton_test::run_command(
        "cd '" + kSource + "' && timeout -k 5 100 " + bench +
        " pipeline-rank configs/bench-mlp-1f1b.yaml --set world.ranks=1"
        " --set model.params.in_features=32 --set model.params.hidden=32 --set run.output_dir='" +
        dir + "' --rotate '" + dir + "/plan.json' --record '" + dir + "/timings.json' 2>&1");
  };
  const auto timed = rotate(
      "[[\"schedule.name=gpipe\", \"schedule.microbatches=2\"], [\"schedule.name=1f1b\", "
      "\"schedule.microbatches=4\"]]");
  ASSERT_EQ(timed.exit_code, 0) << timed.output;
  std::ifstream file(dir + "/timings.json");
  const nlohmann::json timings = nlohmann::json::parse(file, nullptr, false);
  ASSERT_TRUE(timings.is_object()) << timed.output;
  ASSERT_EQ(timings["intervals_s"].size(), 2u);  // candidates
  ASSERT_EQ(timings["compute_ms"].size(), 2u) << timings.dump();
  for (const auto& by_rank : timings["compute_ms"]) {
    ASSERT_EQ(by_rank.size(), 1u) << timings.dump();  // one rank
    EXPECT_GT(by_rank[0].get<double>(), 0) << timings.dump();
  }
  for (const auto& candidate : timings["intervals_s"]) {
    ASSERT_EQ(candidate.size(), 2u);  // rounds
    for (const auto& turn : candidate) {
      ASSERT_EQ(turn.size(), 3u);  // 4 steps, the first not counted
      for (const auto& seconds : turn) EXPECT_GT(seconds.get<double>(), 0);
    }
  }
  const auto failed = rotate(
      "[[\"schedule.name=gpipe\"], [\"schedule.name=zbv\", \"schedule.stages_per_rank=1\"]]");
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_THAT(failed.output,
              HasSubstr("candidate 2 (schedule.name=zbv schedule.stages_per_rank=1): "));
  std::filesystem::remove_all(dir);
}

TEST(CliBenchTune, TurnsShorterThanThreeStepsAreRefused) {
  const auto result = baton_test::run_command(
      "cd '" + kSource + "' && " + kBaton +
      " bench tune configs/bench-mlp-1f1b.yaml --set schedule.name=auto --steps 2 2>&1");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.output, HasSubstr("--steps is the steps of each turn and must be at least 3"));
}

}  // namespace
