// Activation recomputation (model.recompute): a recomputing stage keeps only its inputs between
// a microbatch's forward and backward and runs the forward again before the backward. The
// result must be the same run, bit for bit — weights, losses, a BatchNorm's statistics, with
// dropout drawing the same masks — on every schedule, split backward (I, W) included; and equal
// to PyTorch's own torch.utils.checkpoint run of the stage files at the usual tolerance.
#include <ATen/ops/equal.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include "launch_run.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;
const std::string kPython = BATON_PYTHON;
const std::string kModels = std::string(BATON_SOURCE_DIR) + "/tests/pipeline/your_models";

using baton_test::plus;

class Recompute : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(::testing::TempDir() + "/recompute-" + std::to_string(::getpid()));
    for (const std::string model : {"gpt2_dropout", "resnet_bn"}) {
      const auto made = baton_test::run_command(
          "timeout 120 " + kPython + " '" + BATON_SPLIT + "' '" + kModels + "/" + model +
          ".py' --stages 4 --out '" + *dir_ + "/" + model + "'");
      splits_ok_ = splits_ok_ && made.exit_code == 0;
      split_output_ += made.output;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override { ASSERT_TRUE(splits_ok_) << split_output_; }

  static std::string stages(const std::string& model) {
    std::string list = "[";
    for (int i = 0; i < 4; ++i) {
      list += (i ? ", " : "") + *dir_ + "/" + model + "/stage-" + std::to_string(i) + ".pt";
    }
    return list + "]";
  }

  // The GPT-2 with (ids, mask) and dropout, 4 stage files, 8 microbatches of 2 rows.
  static std::vector<std::string> gpt2(const std::string& schedule, int stages_per_rank) {
    return {"model.name=torchscript",
            "model.stages=" + stages("gpt2_dropout"),
            "model.params.inputs=[\"int64[16]<96\", \"int64[16]<2\"]",
            "data.source=synthetic",
            "data.batch_size=16",
            "schedule.microbatches=8",
            "schedule.name=" + schedule,
            "schedule.stages_per_rank=" + std::to_string(stages_per_rank),
            "optimizer.name=adam",
            "optimizer.lr=0.003",
            "run.steps=3",
            "run.seed=5",
            "world.timeout_s=60",
            "trace.enabled=false"};
  }

  // Every entry of both runs' dumps but the receive-buffer count is equal, bit for bit.
  static void expect_identical(const baton_test::LaunchResult& off,
                               const baton_test::LaunchResult& on, const std::string& label) {
    ASSERT_EQ(off.dumps.size(), on.dumps.size()) << label;
    int compared = 0;
    for (std::size_t rank = 0; rank < off.dumps.size(); ++rank) {
      for (const auto& [key, value] : off.dumps[rank]) {
        if (key == "recv_buffer_allocations") continue;
        const auto found = on.dumps[rank].find(key);
        ASSERT_NE(found, on.dumps[rank].end()) << label << ": rank " << rank << " " << key;
        EXPECT_TRUE(at::equal(value, found->second))
            << label << ": rank " << rank << " " << key << " differs with recompute";
        ++compared;
      }
    }
    EXPECT_GT(compared, 20) << label;
  }

  static std::string* dir_;
  static bool splits_ok_;
  static std::string split_output_;
};

std::string* Recompute::dir_ = nullptr;
bool Recompute::splits_ok_ = true;
std::string Recompute::split_output_;

struct Layout {
  std::string name, schedule;
  int ranks, stages_per_rank;
};

void PrintTo(const Layout& layout, std::ostream* out) {
  *out << layout.schedule << " on " << layout.ranks << " ranks";
}

class RecomputeOnEverySchedule : public Recompute, public testing::WithParamInterface<Layout> {};

TEST_P(RecomputeOnEverySchedule, IsTheSameRunBitForBitAndMatchesPyTorchsCheckpoint) {
  const Layout& layout = GetParam();
  const auto settings = gpt2(layout.schedule, layout.stages_per_rank);
  const auto off = baton_test::launch(kBaton, layout.ranks, settings, "off-" + layout.name);
  ASSERT_EQ(off.command.exit_code, 0) << off.command.output;
  const auto recomputing = plus(settings, {"model.recompute=on"});
  const auto on = baton_test::launch(kBaton, layout.ranks, recomputing, "on-" + layout.name);
  ASSERT_EQ(on.command.exit_code, 0) << on.command.output;
  expect_identical(off, on, layout.name);
  // PyTorch: the stage files a microbatch at a time, each inside torch.utils.checkpoint.
  const auto reference = baton_test::compare_with_torch(on, layout.ranks, recomputing);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("torch.utils.checkpoint"));
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, RecomputeOnEverySchedule,
    testing::Values(Layout{"gpipe", "gpipe", 4, 1}, Layout{"1f1b", "1f1b", 4, 1},
                    Layout{"zero_bubble", "zero_bubble", 4, 1},
                    Layout{"interleaved", "interleaved_1f1b", 2, 2},
                    Layout{"looped_bfs", "looped_bfs", 2, 2}, Layout{"zbv", "zbv", 2, 2},
                    Layout{"dualpipev", "dualpipev", 2, 2}),
    [](const testing::TestParamInfo<Layout>& info) { return info.param.name; });

// Some stages only, with replicas; a BatchNorm's statistics (updated by the first forward
// only) and the export equal the run without recomputation.
TEST_F(Recompute, SomeStagesWithReplicasAndBatchNormAreTheSameRunBitForBit) {
  const std::vector<std::string> resnet = {"model.name=torchscript",
                                           "model.stages=" + stages("resnet_bn"),
                                           "model.params.inputs=[\"float32[3, 8, 8]\"]",
                                           "data.source=synthetic",
                                           "data.batch_size=16",
                                           "schedule.microbatches=2",
                                           "schedule.name=interleaved_1f1b",
                                           "schedule.stages_per_rank=2",
                                           "world.data_parallel=2",
                                           "optimizer.name=sgd",
                                           "optimizer.lr=0.05",
                                           "optimizer.momentum=0.9",
                                           "run.steps=3",
                                           "run.seed=5",
                                           "world.timeout_s=60",
                                           "trace.enabled=false"};
  const auto off = baton_test::launch(kBaton, 4, resnet, "resnet-off");
  ASSERT_EQ(off.command.exit_code, 0) << off.command.output;
  const auto on =
      baton_test::launch(kBaton, 4, plus(resnet, {"model.recompute=[0, 3]"}), "resnet-on");
  ASSERT_EQ(on.command.exit_code, 0) << on.command.output;
  expect_identical(off, on, "resnet [0, 3]");
  EXPECT_EQ(on.dumps.at(0).at("buffer.stem.1.num_batches_tracked").item<std::int64_t>(), 6);
}

TEST_F(Recompute, AStageThePipelineDoesNotHaveIsRefusedByConfigCheck) {
  const auto result = baton_test::run_command(
      kBaton + " config check --set model.recompute=[0,7] " + "--set world.ranks=2 2>&1");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.output, HasSubstr("model.recompute [0, 7]: the pipeline has stages 0 to 1"));
  const auto word =
      baton_test::run_command(kBaton + " config check --set model.recompute=all 2>&1");
  EXPECT_NE(word.exit_code, 0);
  EXPECT_THAT(word.output, HasSubstr("'all' is neither off, on nor a stage index"));
}

}  // namespace
