// What a run leaves behind besides checkpoints: a merged Chrome trace of what really ran
// on every rank (with its SVG picture and the simulated plan's trace beside it) and
// metrics with the measured bubble and each rank's compute, comm and idle time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch_run.h"
#include "read_text.h"

namespace {

using testing::HasSubstr;

using baton_test::read_text;

// A small MLP on synthetic data in batches of 8, no checkpoints; then `sets`.
std::vector<std::string> small_mlp_run(int layers, std::vector<std::string> sets) {
  std::vector<std::string> all = {"model.name=mlp",
                                  "model.params.in_features=8",
                                  "model.params.hidden=16",
                                  "model.params.layers=" + std::to_string(layers),
                                  "model.params.out_features=3",
                                  "data.source=synthetic",
                                  "data.batch_size=8",
                                  "checkpoint.enabled=false"};
  all.insert(all.end(), sets.begin(), sets.end());
  return all;
}

// The merged trace (Chrome's format) parses; on each rank the compute spans of the recorded
// steps (2 steps x 4 microbatches x F and B) never overlap, and the SVG picture draws each of
// them, named as in the trace.
void expect_whole_trace(const std::string& text, const std::string& svg) {
  const nlohmann::json trace = nlohmann::json::parse(text, nullptr, false);
  ASSERT_TRUE(trace.is_object() && trace["traceEvents"].is_array()) << text.substr(0, 200);
  std::map<int, std::vector<std::pair<double, double>>> compute;  // rank -> (start, end)
  std::set<std::string> names;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X") continue;
    const double start = event["ts"].get<double>(), length = event["dur"].get<double>();
    EXPECT_GE(start, 0) << event.dump();
    EXPECT_GE(length, 0) << event.dump();
    if (event.value("cat", "") != "compute") continue;
    compute[event["pid"].get<int>()].push_back({start, start + length});
    names.insert(event["name"].get<std::string>());
  }
  ASSERT_EQ(compute.size(), 2u);
  for (auto& [rank, spans] : compute) {
    EXPECT_EQ(spans.size(), 16u) << "rank " << rank;
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) {
      EXPECT_GE(spans[i].first, spans[i - 1].second - 1e-3) << "rank " << rank << ": span " << i;
    }
  }
  std::set<std::string> drawn;
  for (std::size_t at = svg.find("<title>"); at != std::string::npos;
       at = svg.find("<title>", at + 1)) {
    const std::string title = svg.substr(at + 7, svg.find("</title>", at) - at - 7);
    if (title.find(" (step ") != std::string::npos) drawn.insert(title);
  }
  EXPECT_EQ(drawn, names);
}

TEST(RunOutputs, TraceOfEveryRankMetricsWithBubbleAndTimes) {
  const std::string root = ::testing::TempDir() + "/run-outputs";
  const auto result = baton_test::launch(
      BATON_BINARY, 2,
      small_mlp_run(2, {"schedule.name=gpipe", "schedule.microbatches=4", "run.steps=3",
                        "run.name=outputs", "trace.steps=2", "run.output_dir=" + root}),
      "outputs");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  // Each phase is logged once per rank, prefixed by the launcher alone.
  for (const std::string rank : {"0", "1"}) {
    EXPECT_THAT(result.command.output,
                HasSubstr("[rank " + rank + "] info  rendezvous: met through the tcp store at "));
    EXPECT_THAT(result.command.output,
                HasSubstr("[rank " + rank + "] info  transport: 'gloo' connected in "));
    EXPECT_THAT(result.command.output,
                HasSubstr("[rank " + rank + "] info  runtime: stage shapes agreed"));
  }
  EXPECT_THAT(result.command.output, testing::Not(HasSubstr("] [rank")));
  const std::string run = root + "/outputs";
  EXPECT_THAT(result.command.output, HasSubstr("trace: " + run + "/trace.json"));
  EXPECT_THAT(result.command.output, testing::ContainsRegex("bubble [0-9]+%"));
  // The run's curves, drawn from its metrics at the end.
  EXPECT_THAT(result.command.output, HasSubstr("curves: " + run + "/curves.svg"));
  EXPECT_THAT(read_text(run + "/curves.svg"), HasSubstr("outputs: loss"));
  EXPECT_FALSE(std::filesystem::exists(run + "/checkpoints"));

  const std::string trace = read_text(run + "/trace.json");
  EXPECT_THAT(trace, HasSubstr("\"name\":\"Rank 0\""));
  EXPECT_THAT(trace, HasSubstr("\"name\":\"Rank 1\""));
  EXPECT_THAT(trace, HasSubstr("\"name\":\"comms\""));
  // Every compute action of both recorded steps, on the rank that ran it; none of step 3.
  for (int step : {1, 2}) {
    for (int mb = 0; mb < 4; ++mb) {
      for (const std::string action : {"0F", "1F", "0B", "1B"}) {
        const int rank = action[0] - '0';
        EXPECT_THAT(trace, HasSubstr("\"name\":\"" + action + std::to_string(mb) + " (step " +
                                     std::to_string(step) +
                                     ")\",\"cat\":\"compute\",\"ph\":\"X\","
                                     "\"pid\":" +
                                     std::to_string(rank) + ",\"tid\":0"));
      }
    }
  }
  EXPECT_THAT(trace, testing::Not(HasSubstr("(step 3)")));
  EXPECT_THAT(trace, HasSubstr("0SEND_F0"));
  EXPECT_THAT(trace, HasSubstr("wait 1RECV_F0"));
  expect_whole_trace(trace, read_text(run + "/trace.svg"));
  // The simulated plan's trace: one step of the same plan, 16 compute spans.
  const nlohmann::json plan =
      nlohmann::json::parse(read_text(run + "/plan_trace.json"), nullptr, false);
  ASSERT_TRUE(plan.is_object() && plan["traceEvents"].is_array());
  int planned = 0;
  for (const auto& event : plan["traceEvents"]) {
    planned += event.value("ph", "") == "X" && event.value("tid", -1) == 0;
  }
  EXPECT_EQ(planned, 16);
  EXPECT_THAT(read_text(run + "/plan_trace.svg"), HasSubstr("<svg"));

  const std::string metrics = read_text(run + "/metrics.jsonl");
  EXPECT_THAT(metrics, testing::ContainsRegex("\"step\":3,.*\"bubble\":0\\.[0-9]+"));
  EXPECT_THAT(metrics, testing::ContainsRegex("\\{\"rank\":1,\"compute_s\":[0-9.e-]+,"
                                              "\"comm_s\":[0-9.e-]+,\"idle_s\":[0-9.e-]+,"
                                              "\"step_s\":[0-9.e-]+\\}"));
  // One JSON object per line: the header, then one per step, each complete; its loss is the
  // one the rank holding the last stage dumped (which torch_reference.py checks), and its
  // bubble the one its ranks' times give: 1 - compute / (slowest rank's step x ranks), on
  // every step whatever the load (step_s is recorded, not inferred from idle_s, which is
  // clamped at 0 where posting overlapped compute).
  std::istringstream lines(metrics);
  std::vector<double> losses;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(record.is_object()) << line;
    if (!record.contains("step")) continue;
    EXPECT_EQ(record["step"].get<int>(), static_cast<int>(losses.size()) + 1) << line;
    losses.push_back(record["loss"].get<double>());
    double compute = 0, slowest = 0;
    ASSERT_EQ(record["ranks"].size(), 2u) << line;
    for (const auto& rank : record["ranks"]) {
      const double step = rank["step_s"].get<double>();
      compute += rank["compute_s"].get<double>();
      slowest = std::max(slowest, step);
      EXPECT_GT(step, 0) << line;
      EXPECT_DOUBLE_EQ(
          rank["idle_s"].get<double>(),
          std::max(0.0, step - rank["compute_s"].get<double>() - rank["comm_s"].get<double>()))
          << line;
    }
    EXPECT_NEAR(record["bubble"].get<double>(), std::max(0.0, 1.0 - compute / (2 * slowest)), 1e-9)
        << line;
  }
  ASSERT_EQ(losses.size(), 3u) << metrics;
  const auto& last_stage = result.dumps[1];
  ASSERT_TRUE(last_stage.count("loss")) << "rank 1 holds the last stage";
  const at::Tensor dumped = last_stage.at("loss");
  ASSERT_EQ(dumped.numel(), 3);
  for (int step = 0; step < 3; ++step) {
    EXPECT_DOUBLE_EQ(losses[step], dumped[step].item<double>()) << "step " << step + 1;
  }
}

// Threads a rank computes with: run.threads when set, else OMP_NUM_THREADS as PyTorch takes
// it (torchrun sets 1; scripts/test-portability sets 1 and 2), else the CPUs shared out among
// the local ranks. The first line says which, and the metrics header records it.
TEST(RunOutputs, ThreadsComeFromRunThreadsThenOmpNumThreads) {
  const char* before = std::getenv("OMP_NUM_THREADS");
  const std::string saved = before != nullptr ? before : "";
  setenv("OMP_NUM_THREADS", "2", 1);
  const auto from_omp = baton_test::launch(
      BATON_BINARY, 2, small_mlp_run(2, {"run.steps=1", "trace.enabled=false"}), "threads-omp");
  const auto from_config = baton_test::launch(
      BATON_BINARY, 2, small_mlp_run(2, {"run.steps=1", "trace.enabled=false", "run.threads=1"}),
      "threads-config");
  if (before != nullptr) {
    setenv("OMP_NUM_THREADS", saved.c_str(), 1);
  } else {
    unsetenv("OMP_NUM_THREADS");
  }
  ASSERT_EQ(from_omp.command.exit_code, 0) << from_omp.command.output;
  EXPECT_THAT(from_omp.command.output, HasSubstr("2 threads per rank (OMP_NUM_THREADS)"));
  EXPECT_THAT(read_text(from_omp.dump_dir + "/runs/baton/metrics.jsonl"),
              HasSubstr("\"threads\":2,\"threads_origin\":\"OMP_NUM_THREADS\""));
  ASSERT_EQ(from_config.command.exit_code, 0) << from_config.command.output;
  EXPECT_THAT(from_config.command.output, HasSubstr("1 thread per rank (run.threads)"));
}

// A transport that matches receives by tag (Gloo) moves a message only once its receive is
// posted, so a rank posts the step's receives at its first communication: on rank 0 of looped
// BFS, right after its first send, not at its first RECV, which comes only after all of stage
// 0's forwards (until 2026-12-03 it did, and rank 1's outputs waited that long). Read off the
// rank's own trace: in every recorded step, 0SEND_F0 then "post receives", before 0F1.
TEST(RunOutputs, ARankPostsItsReceivesRightAfterItsFirstSends) {
  const auto result =
      baton_test::launch(BATON_BINARY, 2,
                         small_mlp_run(3, {"schedule.name=looped_bfs", "schedule.stages_per_rank=2",
                                           "schedule.microbatches=4", "run.steps=2",
                                           "run.name=posting", "trace.steps=2"}),
                         "posting");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  std::istringstream lines(read_text(result.dump_dir + "/runs/posting/trace-ranks/rank0.tsv"));
  std::vector<std::string> names;  // the spans of rank 0, in the order it ran them
  for (std::string line; std::getline(lines, line);)
    names.push_back(line.substr(line.rfind('\t') + 1));
  int steps = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].rfind("0F0 (step ", 0) != 0) continue;
    ++steps;
    ASSERT_LT(i + 3, names.size());
    EXPECT_EQ(names[i + 1], "0SEND_F0") << names[i];
    EXPECT_EQ(names[i + 2], "post receives") << names[i];
    EXPECT_EQ(names[i + 3].rfind("0F1 (step ", 0), 0u) << names[i + 3];
  }
  EXPECT_EQ(steps, 2) << result.command.output;
}

}  // namespace
