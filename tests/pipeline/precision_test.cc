// precision.compute: bf16 against PyTorch's own autocast (tests/pipeline/torch_reference.py):
// a gradient-accumulation loop as nanoGPT writes it, each microbatch's forward and loss inside
// its own torch.autocast("cpu", dtype=torch.bfloat16), float32 parameters and .grad. The
// same bf16 ops on the same rows give the same bf16 results; what can differ is the order of
// the float32 sums (the microbatches' gradients added into .grad, the optimizer), so the
// reference's float32 tolerances hold (docs/testing.md, "Tolerances"). A float32 run against
// the bf16 reference must fail them by far: the comparison tells the two apart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launch_run.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;

struct PrecisionCase {
  std::string name;
  std::vector<std::string> settings;
};

std::vector<std::string> mlp_on(const std::string& schedule, int stages_per_rank) {
  return {"model.name=mlp",
          "model.params.in_features=12",
          "model.params.hidden=16",
          "model.params.layers=" + std::to_string(2 * stages_per_rank),
          "model.params.out_features=5",
          "data.source=synthetic",
          "data.batch_size=16",
          "schedule.name=" + schedule,
          "schedule.microbatches=8",
          "schedule.stages_per_rank=" + std::to_string(stages_per_rank),
          "transport.name=gloo",
          "optimizer.name=sgd",
          "optimizer.lr=0.05",
          "optimizer.momentum=0.9",
          "run.steps=3",
          "run.seed=11",
          "world.timeout_s=60"};
}

// The language-model recipe: a GPT with its head tied to the token embedding, AdamW in
// nanoGPT's two groups, clipping, on the shipped text; and with every stage recomputing.
std::vector<std::string> gpt_recipe(const std::string& recompute) {
  return {"model.name=gpt",
          "model.params.vocab_size=256",
          "model.params.seq_len=16",
          "model.params.d_model=32",
          "model.params.heads=2",
          "model.params.layers=2",
          "model.params.tie_embeddings=true",
          "model.recompute=" + recompute,
          "data.batch_size=8",
          "schedule.name=1f1b",
          "schedule.microbatches=4",
          "transport.name=gloo",
          "optimizer.name=adamw",
          "optimizer.lr=0.003",
          "optimizer.weight_decay=0.1",
          "optimizer.decay=matrices",
          "optimizer.clip_grad_norm=1.0",
          "run.steps=3",
          "run.seed=5",
          "world.timeout_s=60"};
}

class Bf16 : public testing::TestWithParam<PrecisionCase> {};

TEST_P(Bf16, TrainsAsPyTorchsAutocastLoop) {
  const std::vector<std::string> settings =
      baton_test::plus(GetParam().settings, {"precision.compute=bf16"});
  const auto run = baton_test::launch(kBaton, 2, settings, "bf16-" + GetParam().name);
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const auto reference = baton_test::compare_with_torch(run, 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, Bf16,
    testing::Values(PrecisionCase{"1f1b", mlp_on("1f1b", 1)},
                    PrecisionCase{"interleaved", mlp_on("interleaved_1f1b", 2)},
                    PrecisionCase{"zbv", mlp_on("zbv", 2)},
                    PrecisionCase{"dualpipev", mlp_on("dualpipev", 2)},
                    PrecisionCase{"gpt_recipe", gpt_recipe("off")},
                    PrecisionCase{"gpt_recipe_recompute", gpt_recipe("on")}),
    [](const testing::TestParamInfo<PrecisionCase>& info) { return info.param.name; });

// The proof that the comparison can fail: float32 training is not within the bf16
// reference's tolerance.
TEST(Bf16Reference, RefusesAFloat32Run) {
  const std::vector<std::string> settings = mlp_on("1f1b", 1);
  const auto run = baton_test::launch(kBaton, 2, settings, "bf16-reference-fp32-run");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const auto reference = baton_test::compare_with_torch(
      run, 2, baton_test::plus(settings, {"precision.compute=bf16"}));
  EXPECT_EQ(reference.exit_code, 1) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("differ from the reference"));
}

TEST(Precision, Fp16OnACpuIsRefusedWithTheFix) {
  const auto run =
      baton_test::launch(kBaton, 2, baton_test::plus(mlp_on("1f1b", 1), {"precision.compute=fp16"}),
                         "fp16-on-cpu", 60);
  EXPECT_NE(run.command.exit_code, 0);
  EXPECT_THAT(run.command.output, HasSubstr("precision.compute: fp16 autocast runs on a GPU only"));
  EXPECT_THAT(run.command.output, HasSubstr("on a CPU use bf16"));
}

}  // namespace
