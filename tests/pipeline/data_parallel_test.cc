// Pipelines x data parallelism beyond the built-in MLP: the GPT on the text source, a user's
// TorchScript stage files (nanoGPT cut by baton-split) on the text source, exported from a
// checkpoint the replicas wrote, and schedule: auto choosing for replicas and over UCX — each
// against plain PyTorch (torch_reference.py), which trains one model on the whole batch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch_run.h"
#include "plugin_for_test.h"
#include "read_text.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;
const std::string kSource = BATON_SOURCE_DIR;
const std::string kText = kSource + "/configs/data/declaration.txt";

using baton_test::plus;

// SGD: Adam would scale the rounding noise of the attention key bias's exactly-zero gradient
// to lr-sized steps, which the reference allows for (docs/testing.md, "Tolerances") but which
// would leave those parameters loosely checked.
const std::vector<std::string> kTraining = {
    "optimizer.name=sgd", "optimizer.lr=0.1",   "optimizer.momentum=0.5", "run.steps=3",
    "run.seed=3",         "world.timeout_s=60", "trace.enabled=false"};

// A small MLP whose schedule `auto` chooses.
const std::vector<std::string> kAutoMlp = plus(
    kTraining, {"model.name=mlp", "model.params.in_features=8", "model.params.hidden=16",
                "model.params.layers=4", "model.params.out_features=3", "data.source=synthetic",
                "data.batch_size=8", "schedule.name=auto", "checkpoint.enabled=false",
                // The other ranks wait for rank 0's measurements as long as this: a hang
                // guard, as the measurements take what the machine's load makes them take.
                "world.timeout_s=300"});

TEST(DataParallelWorkloads, TheGptOnTextAsTwoReplicasOfTwoStagesTrainsLikePyTorch) {
  const auto settings = plus(
      kTraining,
      {"model.name=gpt", "model.params.seq_len=16", "model.params.d_model=32",
       "model.params.heads=4", "model.params.layers=2", "data.source=text", "data.tokens=" + kText,
       "data.batch_size=8", "schedule.name=interleaved_1f1b", "schedule.stages_per_rank=2",
       "schedule.microbatches=2", "world.data_parallel=2", "checkpoint.enabled=false"});
  const auto result = baton_test::launch(kBaton, 4, settings, "dp-gpt-text");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  EXPECT_THAT(result.command.output, HasSubstr("layout: 2 replicas x 2 pipeline ranks"));
  const auto reference = baton_test::compare_with_torch(result, 4, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

// The shipped nanoGPT stage files on two replicas, then its checkpoint exported: Python loads
// a state dict with the model's own names, equal to what replica 0 held at the end.
TEST(DataParallelWorkloads, StageFilesOnTwoReplicasTrainLikePyTorchAndExportWhole) {
  const std::string out = ::testing::TempDir() + "/dp-stage-files";
  baton_test::run_command("rm -rf '" + out + "'");
  const std::string stages = "model.stages=[" + kSource + "/configs/models/nanogpt-2/stage-0.pt," +
                             kSource + "/configs/models/nanogpt-2/stage-1.pt]";
  const auto settings =
      plus(kTraining, {"model.name=torchscript", stages, "model.params.inputs=[\"int64[32]<256\"]",
                       "data.source=text", "data.tokens=" + kText, "data.batch_size=8",
                       "schedule.name=1f1b", "schedule.microbatches=2", "world.data_parallel=2",
                       "checkpoint.every=3", "run.name=dp", "run.output_dir=" + out});
  const auto result = baton_test::launch(kBaton, 4, settings, "dp-stage-files");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference = baton_test::compare_with_torch(result, 4, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;

  const auto exported = baton_test::run_command(kBaton + " export '" + out +
                                                "/dp/checkpoints' --out '" + out + "/model.pt'");
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  // The replicas hold the same parameters: replica 0's two ranks write the checkpoint.
  EXPECT_THAT(exported.output, HasSubstr("exported 53 parameters and 4 buffers from 2 ranks"));
  const std::string script =
      "import sys, torch\n"
      "model = torch.load(sys.argv[1])\n"
      "held = {}\n"
      "for path in sys.argv[2:]:\n"
      "    for key, value in torch.load(path).items():\n"
      "        if key.startswith('param.'):\n"
      "            held[key[6:]] = value\n"
      "assert set(held) <= set(model), sorted(set(held) - set(model))\n"
      "differ = [n for n in held if not torch.equal(model[n], held[n])]\n"
      "print('%d parameters, %d differ %s' % (len(held), len(differ), differ[:3]))\n"
      "print('and', sorted(set(model) - set(held)))\n";
  std::ofstream(out + "/check.py") << script;
  const auto python = baton_test::run_command(
      std::string(BATON_PYTHON) + " '" + out + "/check.py' '" + out + "/model.pt' '" +
      result.dump_dir + "/rank0.pt' '" + result.dump_dir + "/rank1.pt'");
  ASSERT_EQ(python.exit_code, 0) << python.output;
  EXPECT_THAT(python.output, HasSubstr("53 parameters, 0 differ []")) << python.output;
  // The causal masks, persistent buffers of the stage files, are exported too.
  EXPECT_THAT(python.output, HasSubstr("and ['h.0.attn.bias', 'h.1.attn.bias', 'h.2.attn.bias', "
                                       "'h.3.attn.bias']"))
      << python.output;
}

// schedule: auto for two replicas: the choice is made once and run by every replica.
TEST(DataParallelWorkloads, AutoChoosesForTwoReplicasAndTrainsLikePyTorch) {
  const auto settings = plus(kAutoMlp, {"world.data_parallel=2"});
  const auto result = baton_test::launch(kBaton, 4, settings, "dp-auto");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  EXPECT_THAT(result.command.output, HasSubstr("[rank 0] chosen: "));
  const auto reference = baton_test::compare_with_torch(result, 4, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

// schedule: auto over UCX measures UCX's transfers, and its choice trains like PyTorch.
TEST(DataParallelWorkloads, AutoOverUcxMeasuresUcxAndTrainsLikePyTorch) {
  BATON_REQUIRE_PLUGIN(ucx, baton::PluginKind::kTransport, "ucx");
  const auto settings = plus(kAutoMlp, {"transport.name=ucx"});
  const auto result = baton_test::launch(kBaton, 2, settings, "auto-ucx");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  EXPECT_THAT(result.command.output, HasSubstr("[rank 0] chosen: "));
  const auto reference = baton_test::compare_with_torch(result, 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

// DDP's overlap: a bucket's all-reduce starts as soon as its gradients are final, inside the
// stage's last backward of the step (its last B, or its last W for zero bubble), not at
// REDUCE_GRAD after it. Each parameter has a bucket of its own here, so in every traced step
// every bucket starts before that backward ends, and REDUCE_GRAD is left with nothing to
// start (one span: its own). Trained against plain PyTorch too.
class ReductionOverlap : public testing::TestWithParam<std::string> {};

TEST_P(ReductionOverlap, EveryBucketStartsInsideTheStagesLastBackward) {
  const auto settings = plus(
      kTraining, {"model.name=mlp", "model.params.in_features=8", "model.params.hidden=64",
                  "model.params.layers=3", "model.params.out_features=4", "data.source=synthetic",
                  "data.batch_size=16", "schedule.microbatches=4", "schedule.name=" + GetParam(),
                  "world.data_parallel=2", "world.bucket_mb=0.0001", "trace.enabled=true",
                  "trace.steps=2", "checkpoint.enabled=false", "run.name=overlap"});
  const auto result = baton_test::launch(kBaton, 2, settings, "dp-overlap-" + GetParam());
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  // input, 3 layers and the head: a weight and a bias each.
  EXPECT_THAT(result.command.output, HasSubstr("in 10 buckets"));
  const auto reference = baton_test::compare_with_torch(result, 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;

  const nlohmann::json trace = nlohmann::json::parse(
      baton_test::read_text(result.dump_dir + "/runs/overlap/trace.json"), nullptr, false);
  ASSERT_TRUE(trace.is_object()) << "no trace";
  struct Step {
    double start = std::numeric_limits<double>::infinity();
    double last_backward_end = 0;
  };
  std::map<int, std::map<int, Step>> steps;       // rank -> step -> times
  std::map<int, std::vector<double>> reductions;  // rank -> start of each REDUCE_GRAD span
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X") continue;
    const std::string name = event["name"].get<std::string>();
    const int rank = event["pid"].get<int>();
    const double start = event["ts"].get<double>(), end = start + event["dur"].get<double>();
    if (event.value("cat", "") == "compute") {
      // "<stage><action><microbatch> (step <n>)", e.g. "0B3 (step 2)"
      const std::size_t step_at = name.find("(step ");
      ASSERT_NE(step_at, std::string::npos) << name;
      Step& step = steps[rank][std::stoi(name.substr(step_at + 6))];
      step.start = std::min(step.start, start);
      if (name[1] == 'B' || name[1] == 'W') {
        step.last_backward_end = std::max(step.last_backward_end, end);
      }
    } else if (name == "0REDUCE_GRAD") {
      reductions[rank].push_back(start);
    }
  }
  ASSERT_EQ(steps.size(), 2u);
  for (const auto& [rank, by_step] : steps) {
    ASSERT_EQ(by_step.size(), 2u) << "rank " << rank;
    for (auto it = by_step.begin(); it != by_step.end(); ++it) {
      const auto next = std::next(it);
      const double until =
          next == by_step.end() ? std::numeric_limits<double>::infinity() : next->second.start;
      int early = 0, late = 0;
      for (double start : reductions[rank]) {
        if (start < it->second.start || start >= until) continue;
        ++(start < it->second.last_backward_end ? early : late);
      }
      EXPECT_EQ(early, 10) << "rank " << rank << ", step " << it->first;
      EXPECT_EQ(late, 1) << "rank " << rank << ", step " << it->first;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BackwardAndWeightGradients, ReductionOverlap,
                         testing::Values("1f1b", "zero_bubble"));

}  // namespace
