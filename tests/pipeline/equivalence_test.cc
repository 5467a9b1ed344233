// For every schedule plugin, on every transport, with 2 and 4 ranks: training through
// `baton launch` gives the losses, the gradients and the parameters that plain PyTorch gives
// for the same model, data and optimizer (SGD with momentum and weight decay), computed by
// tests/pipeline/torch_reference.py from the initial parameters the ranks dumped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "launch_run.h"
#include "plugin_for_test.h"
#include "torch_reference.h"

namespace {

const std::string kBaton = BATON_BINARY;
constexpr int kSteps = 3;

struct Case {
  std::string schedule;
  int stages_per_rank;
  int ranks;  // in all: data_parallel x the pipeline's
  std::string transport;
  int data_parallel = 1;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  if (c.data_parallel > 1) {
    return c.schedule + "_pp" + std::to_string(c.ranks / c.data_parallel) + "_dp" +
           std::to_string(c.data_parallel) + "_" + c.transport;
  }
  return c.schedule + "_" + std::to_string(c.ranks) + "ranks_" + c.transport;
}

// CTest names the cases by this, not by the struct's bytes.
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.schedule << " on " << c.ranks << " ranks over " << c.transport;
  if (c.data_parallel > 1) *out << " (" << c.data_parallel << " replicas)";
}

// The run's configuration, given to the launch (as --set) and to the reference. With
// replicas, each takes 8 rows of the global batch: the reference trains on all of them.
// Over gloo the replicas reduce every parameter in a bucket of its own (bucket_mb of ~100
// bytes), so buckets start one by one as the stage's last backward finishes each gradient
// (its hook, or W); over UCX a stage's gradients fit one default bucket, which starts when
// the last of them is final.
std::vector<std::string> settings_for(const Case& c) {
  const int stages = c.ranks / c.data_parallel * c.stages_per_rank;
  const int batch = c.data_parallel > 1 ? 8 * c.data_parallel : 16;
  const std::string bucket_mb = c.data_parallel > 1 && c.transport == "gloo" ? "0.0001" : "25";
  return {"world.bucket_mb=" + bucket_mb,
          "model.name=mlp",
          "model.params.in_features=12",
          "model.params.hidden=16",
          "model.params.layers=" + std::to_string(stages),  // input + layers + head units
          "model.params.out_features=5",
          "data.source=synthetic",
          "data.batch_size=" + std::to_string(batch),
          "world.data_parallel=" + std::to_string(c.data_parallel),
          "schedule.name=" + c.schedule,
          "schedule.microbatches=" + std::to_string(c.data_parallel > 1 ? 4 : 8),
          "schedule.stages_per_rank=" + std::to_string(c.stages_per_rank),
          "transport.name=" + c.transport,
          "optimizer.name=sgd",
          "optimizer.lr=0.05",
          "optimizer.momentum=0.9",
          "optimizer.weight_decay=0.01",
          "run.steps=" + std::to_string(kSteps),
          "run.seed=11",
          "run.name=equivalence",
          "world.timeout_s=60"};
}

class PipelineEquivalence : public testing::TestWithParam<Case> {};

TEST_P(PipelineEquivalence, MatchesPlainPyTorch) {
  const Case& c = GetParam();
  BATON_REQUIRE_PLUGIN(transport, baton::PluginKind::kTransport, c.transport);

  const auto result = baton_test::launch(kBaton, c.ranks, settings_for(c), case_name({c, 0}));
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference = baton_test::compare_with_torch(result, c.ranks, settings_for(c));
  EXPECT_EQ(reference.exit_code, 0) << reference.output;

  int ranks_with_buffer_counts = 0;
  for (const auto& dump : result.dumps) {
    if (!dump.count("recv_buffer_allocations")) continue;
    // [after step 1, after the last step]: nothing allocated once steps run.
    const auto& counts = dump.at("recv_buffer_allocations");
    EXPECT_GT(counts[0].item<std::int64_t>(), 0);
    EXPECT_EQ(counts[1].item<std::int64_t>(), counts[0].item<std::int64_t>());
    ++ranks_with_buffer_counts;
  }
  EXPECT_EQ(ranks_with_buffer_counts, c.ranks);
}

std::vector<Case> all_cases() {
  const std::vector<std::pair<std::string, int>> schedules = {
      {"gpipe", 1},      {"1f1b", 1}, {"zero_bubble", 1}, {"interleaved_1f1b", 2},
      {"looped_bfs", 2}, {"zbv", 2},  {"dualpipev", 2},   {"v_half", 2},
      {"v_min", 2}};
  std::vector<Case> cases;
  for (const std::string transport : {"gloo", "ucx"}) {
    for (int ranks : {2, 4}) {
      for (const auto& [schedule, stages_per_rank] : schedules) {
        cases.push_back({schedule, stages_per_rank, ranks, transport});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EverySchedule, PipelineEquivalence, testing::ValuesIn(all_cases()),
                         case_name);

// Receive buffers are reused across microbatches: a schedule that bounds its activations
// allocates as many at 32 microbatches as at 8 (one pool slot per buffer in use at once, plus
// those posted ahead), and with 32 microbatches of one row, every buffer reused many times in
// a step, training still matches plain PyTorch.
class ReceiveBuffers : public testing::TestWithParam<Case> {};

TEST_P(ReceiveBuffers, AsManyAtThirtyTwoMicrobatchesAsAtEight) {
  const Case& c = GetParam();
  std::vector<std::vector<std::int64_t>> counts;  // [microbatch count][rank]
  for (const int microbatches : {8, 32}) {
    std::vector<std::string> settings = settings_for(c);
    settings.push_back("schedule.microbatches=" + std::to_string(microbatches));
    settings.push_back("data.batch_size=32");
    const std::string name = case_name({c, 0}) + "_m" + std::to_string(microbatches);
    const auto result = baton_test::launch(kBaton, c.ranks, settings, name);
    ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
    counts.emplace_back();
    for (const auto& dump : result.dumps) {
      const auto& allocated = dump.at("recv_buffer_allocations");
      EXPECT_EQ(allocated[1].item<std::int64_t>(), allocated[0].item<std::int64_t>());
      counts.back().push_back(allocated[1].item<std::int64_t>());
    }
    if (microbatches == 32) {
      const auto reference = baton_test::compare_with_torch(result, c.ranks, settings);
      EXPECT_EQ(reference.exit_code, 0) << reference.output;
    }
  }
  EXPECT_EQ(counts[1], counts[0]);
  for (const std::int64_t count : counts[1]) EXPECT_LT(count, 32);  // not one per microbatch
}

INSTANTIATE_TEST_SUITE_P(BoundedSchedules, ReceiveBuffers,
                         testing::Values(Case{"1f1b", 1, 2, "gloo"}, Case{"zbv", 2, 2, "gloo"},
                                         Case{"1f1b", 1, 4, "ucx"}),
                         case_name);

// Pipelines x data parallelism: every schedule as two replicas of a 2-rank pipeline (4
// ranks), over both CPU transports, and 1F1B as three replicas (6 ranks). Each replica must
// match plain PyTorch on the whole global batch by itself.
std::vector<Case> data_parallel_cases() {
  const std::vector<std::pair<std::string, int>> schedules = {
      {"gpipe", 1},      {"1f1b", 1}, {"zero_bubble", 1}, {"interleaved_1f1b", 2},
      {"looped_bfs", 2}, {"zbv", 2},  {"dualpipev", 2},   {"v_half", 2},
      {"v_min", 2}};
  std::vector<Case> cases;
  for (const std::string transport : {"gloo", "ucx"}) {
    for (const auto& [schedule, stages_per_rank] : schedules) {
      cases.push_back({schedule, stages_per_rank, 4, transport, 2});
    }
  }
  cases.push_back({"1f1b", 1, 6, "gloo", 3});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(DataParallel, PipelineEquivalence,
                         testing::ValuesIn(data_parallel_cases()), case_name);

// Models, data sources, losses and optimizers beyond the schedule matrix above, each checked
// against plain PyTorch the same way.
struct Workload {
  std::string name;
  std::vector<std::string> settings;
};

void PrintTo(const Workload& workload, std::ostream* out) {
  *out << workload.name;
}

class WorkloadEquivalence : public testing::TestWithParam<Workload> {};

TEST_P(WorkloadEquivalence, MatchesPlainPyTorch) {
  std::vector<std::string> settings = GetParam().settings;
  settings.insert(settings.end(),
                  {"run.steps=3", "run.seed=5", "world.timeout_s=60", "transport.name=gloo"});
  const auto result = baton_test::launch(kBaton, 2, settings, "workload-" + GetParam().name);
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference = baton_test::compare_with_torch(result, 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

// Adam divides each gradient by its own magnitude, so float rounding in a near-zero gradient
// (microbatches sum in another order than the whole batch) is magnified in the update, in
// proportion to lr; the Adam cases keep lr at 0.001-0.005 so that stays within rtol 1e-5 and
// atol 1e-6 (at lr 0.01 the GPT drifts by 9e-6 after three steps). The "Prefetched" cases make
// their microbatches on the background thread (data.prefetch: true), which data.prefetch: auto
// leaves off on a machine whose CPUs all compute, such as 2 CPUs for 2 ranks; on DualPipeV rank
// 0 takes both the inputs and, later, the targets of every microbatch from it.
std::vector<Workload> workloads() {
  const std::string text = std::string(BATON_SOURCE_DIR) + "/configs/data/declaration.txt";
  const std::vector<std::string> gpt = {"model.name=gpt",          "model.params.vocab_size=256",
                                        "model.params.seq_len=16", "model.params.d_model=32",
                                        "model.params.heads=4",    "model.params.layers=2",
                                        "data.batch_size=8",       "schedule.microbatches=4"};
  auto with = [](std::vector<std::string> base, std::vector<std::string> more) {
    base.insert(base.end(), more.begin(), more.end());
    return base;
  };
  const std::vector<std::string> mlp = {
      "model.name=mlp",        "model.params.in_features=10", "model.params.hidden=16",
      "model.params.layers=3", "model.params.out_features=4", "data.source=synthetic",
      "data.batch_size=12",    "schedule.microbatches=6"};
  return {
      {"GptOnTextInterleavedAdamPrefetched",
       with(gpt, {"data.source=text", "data.tokens=" + text, "data.prefetch=true",
                  "schedule.name=interleaved_1f1b", "schedule.stages_per_rank=2",
                  "optimizer.name=adam", "optimizer.lr=0.001", "optimizer.weight_decay=0.01"})},
      // Cross entropy with label smoothing, under AdamW and a warm-up.
      {"GptOnTextLabelSmoothingAdamW",
       with(gpt, {"data.source=text", "data.tokens=" + text, "schedule.name=1f1b",
                  "model.label_smoothing=0.1", "optimizer.name=adamw", "optimizer.lr=0.001",
                  "optimizer.weight_decay=0.1", "lr_schedule.warmup_steps=2"})},
      {"GptSyntheticZeroBubbleSgd",
       with(gpt, {"data.source=synthetic", "schedule.name=zero_bubble", "optimizer.name=sgd",
                  "optimizer.lr=0.1", "optimizer.momentum=0.5"})},
      {"MlpMseAdam1F1B", with(mlp, {"model.loss=mse", "schedule.name=1f1b", "optimizer.name=adam",
                                    "optimizer.lr=0.005"})},
      {"MlpCrossEntropyAdamDualPipeVPrefetched",
       with(mlp, {"data.prefetch=true", "schedule.name=dualpipev", "schedule.stages_per_rank=2",
                  "optimizer.name=adam", "optimizer.lr=0.005", "optimizer.weight_decay=0.1"})},
  };
}

INSTANTIATE_TEST_SUITE_P(ModelsDataLossesOptimizers, WorkloadEquivalence,
                         testing::ValuesIn(workloads()),
                         [](const testing::TestParamInfo<Workload>& info) {
                           return info.param.name;
                         });

// Adam with replicas: each replica divides the averaged gradient by its own running magnitude,
// so a replica whose gradient was not averaged exactly would drift at once.
TEST(DataParallelWorkload, AdamOnTwoReplicasMatchesPlainPyTorch) {
  const std::vector<std::string> settings = {"model.name=mlp",
                                             "model.params.in_features=10",
                                             "model.params.hidden=16",
                                             "model.params.layers=3",
                                             "model.params.out_features=4",
                                             "data.source=synthetic",
                                             "data.batch_size=12",
                                             "schedule.microbatches=3",
                                             "schedule.name=1f1b",
                                             "world.data_parallel=2",
                                             "optimizer.name=adam",
                                             "optimizer.lr=0.005",
                                             "optimizer.weight_decay=0.01",
                                             "run.steps=3",
                                             "run.seed=5",
                                             "world.timeout_s=60",
                                             "transport.name=gloo"};
  const auto result = baton_test::launch(kBaton, 4, settings, "dp-adam");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference = baton_test::compare_with_torch(result, 4, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

// A plan no built-in schedule makes, written by hand as CSV: all forwards, then the backwards
// newest first. It must train like plain PyTorch too, not only exit 0.
TEST(CsvPlanEquivalence, AHandWrittenOrderTrainsLikePlainPyTorch) {
  const std::string plan = ::testing::TempDir() + "/lifo-backward.csv";
  std::ofstream(plan) << "0F0,0F1,0F2,0F3,0B3,0B2,0B1,0B0\n"
                         "1F0,1F1,1F2,1F3,1B3,1B2,1B1,1B0\n";
  const std::vector<std::string> settings = {"model.name=mlp",
                                             "model.params.in_features=6",
                                             "model.params.hidden=12",
                                             "model.params.layers=2",
                                             "model.params.out_features=3",
                                             "data.source=synthetic",
                                             "data.batch_size=8",
                                             "schedule.name=csv",
                                             "schedule.params.path=" + plan,
                                             "schedule.microbatches=4",
                                             "optimizer.name=sgd",
                                             "optimizer.lr=0.1",
                                             "optimizer.momentum=0.9",
                                             "run.steps=3",
                                             "run.seed=9",
                                             "world.timeout_s=60"};
  const auto result = baton_test::launch(kBaton, 2, settings, "csv-lifo");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference = baton_test::compare_with_torch(result, 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

}  // namespace
