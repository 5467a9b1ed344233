// precision.compute: bf16 against PyTorch's own autocast (tests/pipeline/torch_reference.py):
// a gradient-accumulation loop as nanoGPT writes it, each microbatch's forward and loss inside
// its own torch.autocast("cpu", dtype=torch.bfloat16), float32 parameters and .grad. The
// same bf16 ops on the same rows give the same bf16 results; what can differ is the order of
// the float32 sums (the microbatches' gradients added into .grad, the optimizer), so the
// reference's float32 tolerances hold (docs/testing.md, "Tolerances"). A float32 run against
// the bf16 reference must fail them by far: the comparison tells the two apart.
#include <ATen/ops/equal.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "gpt_recipe_settings.h"
#include "launch_run.h"
#include "read_text.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;

struct PrecisionCase {
  std::string name;
  std::vector<std::string> settings;
  int ranks = 2;
};

void PrintTo(const PrecisionCase& precision_case, std::ostream* out) {
  *out << precision_case.name << " on " << precision_case.ranks << " ranks";
}

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

using baton_test::gpt_recipe;

class Bf16 : public testing::TestWithParam<PrecisionCase> {};

TEST_P(Bf16, TrainsAsPyTorchsAutocastLoop) {
  const std::vector<std::string> settings =
      baton_test::plus(GetParam().settings, {"precision.compute=bf16"});
  const int ranks = GetParam().ranks;
  const auto run = baton_test::launch(kBaton, ranks, settings, "bf16-" + GetParam().name);
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const auto reference = baton_test::compare_with_torch(run, ranks, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, Bf16,
    testing::Values(PrecisionCase{"1f1b", mlp_on("1f1b", 1)},
                    PrecisionCase{"interleaved", mlp_on("interleaved_1f1b", 2)},
                    PrecisionCase{"zbv", mlp_on("zbv", 2)},
                    PrecisionCase{"dualpipev", mlp_on("dualpipev", 2)},
                    PrecisionCase{"gpt_recipe", gpt_recipe("off")},
                    PrecisionCase{"gpt_recipe_recompute", gpt_recipe("on")},
                    PrecisionCase{"gpt_recipe_pp2_dp2",
                                  baton_test::plus(gpt_recipe("[1]"), {"world.data_parallel=2"}),
                                  4}),
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

TEST(Bf16Reference, RefusesAFloat32RunOfTheGptRecipe) {
  const std::vector<std::string> settings = gpt_recipe("off");
  const auto run = baton_test::launch(kBaton, 2, settings, "bf16-reference-fp32-gpt");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const auto reference = baton_test::compare_with_torch(
      run, 2, baton_test::plus(settings, {"precision.compute=bf16"}));
  EXPECT_EQ(reference.exit_code, 1) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("differ from the reference"));
}

// precision.wire: bf16 — every floating activation and gradient that crosses between ranks is
// rounded to bfloat16 once, and nothing else changes. The reference rounds at the same
// crossings (the units whose next unit another rank holds) and nowhere else, so the float32
// tolerances hold again: a float32 model whose activations cross in bf16, the GPT recipe under
// bf16 autocast on 1F1B, on ZB-V (whose last rank hands stage 1's outputs to stage 2 locally:
// no crossing there) and as PP2 x DP2.
class Wire : public testing::TestWithParam<PrecisionCase> {};

TEST_P(Wire, Bf16RoundsAtEveryCrossingAndNowhereElse) {
  const std::vector<std::string> settings =
      baton_test::plus(GetParam().settings, {"precision.wire=bf16"});
  const int ranks = GetParam().ranks;
  const auto run = baton_test::launch(kBaton, ranks, settings, "wire-" + GetParam().name);
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const auto reference = baton_test::compare_with_torch(run, ranks, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("precision.wire bf16 after "));
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, Wire,
    testing::Values(PrecisionCase{"mlp_fp32_1f1b", mlp_on("1f1b", 1)},
                    PrecisionCase{"gpt_bf16_1f1b",
                                  baton_test::plus(gpt_recipe("off"), {"precision.compute=bf16"})},
                    PrecisionCase{
                        "gpt_bf16_zbv",
                        baton_test::plus(gpt_recipe("off"),
                                         {"precision.compute=bf16", "schedule.name=zbv",
                                          "schedule.stages_per_rank=2", "model.params.layers=3"})},
                    PrecisionCase{"gpt_bf16_pp2_dp2",
                                  baton_test::plus(gpt_recipe("off"), {"precision.compute=bf16",
                                                                       "world.data_parallel=2"}),
                                  4}),
    [](const testing::TestParamInfo<PrecisionCase>& info) { return info.param.name; });

// The comparison tells a run that did not round apart from one that did.
TEST(WireReference, RefusesARunThatSentFloat32) {
  const std::vector<std::string> settings = mlp_on("1f1b", 1);
  const auto run = baton_test::launch(kBaton, 2, settings, "wire-reference-fp32-run");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const auto reference =
      baton_test::compare_with_torch(run, 2, baton_test::plus(settings, {"precision.wire=bf16"}));
  EXPECT_EQ(reference.exit_code, 1) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("differ from the reference"));
}

// The bytes every post moved, summed over a traced step, per rank (trace.json's comms events).
std::map<int, std::int64_t> traced_bytes(const std::string& trace_path) {
  const nlohmann::json trace =
      nlohmann::json::parse(baton_test::read_text(trace_path), nullptr, false);
  std::map<int, std::int64_t> bytes;
  // A const json's operator[] on a missing key is undefined behaviour (an X event without
  // args): every lookup goes through contains() / value().
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace.at("traceEvents").is_array()) {
    return bytes;
  }
  for (const auto& event : trace.at("traceEvents")) {
    if (event.value("ph", "") != "X" || !event.contains("args") || !event.at("args").is_object() ||
        !event.contains("pid")) {
      continue;
    }
    const auto& args = event.at("args");
    bytes[event.at("pid").get<int>()] +=
        args.value("bytes_sent", std::int64_t{0}) + args.value("bytes_received", std::int64_t{0});
  }
  return bytes;
}

TEST(Wire, Bf16HalvesTheBytesOfEveryTransfer) {
  std::map<std::string, std::map<int, std::int64_t>> bytes;
  for (const std::string wire : {"auto", "bf16"}) {
    const auto run = baton_test::launch(
        kBaton, 2,
        baton_test::plus(mlp_on("1f1b", 1),
                         {"precision.wire=" + wire, "trace.enabled=true", "trace.steps=1",
                          "run.name=bytes", "checkpoint.enabled=false"}),
        "wire-bytes-" + wire);
    ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
    bytes[wire] = traced_bytes(run.dump_dir + "/runs/bytes/trace.json");
  }
  ASSERT_EQ(bytes["auto"].size(), 2u);
  for (const auto& [rank, float32_bytes] : bytes["auto"]) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    // 8 microbatches of 2 rows of 16 floats, each way: activations out, gradients back.
    EXPECT_EQ(float32_bytes, 2 * 8 * 2 * 16 * 4);
    EXPECT_EQ(bytes["bf16"][rank] * 2, float32_bytes);
  }
}

// precision.reduce: bf16 — the replicas' gradients summed in bfloat16. The reference computes
// each replica's own gradient and allows, per element, the most the casts and the bf16 sum
// can move the average (bf16_reduce_uncertainty in torch_reference.py); a run that reduced in
// float32 is within that too, so the bf16 run must also differ from it, and say it summed in
// bf16.
TEST(Reduce, Bf16AveragesTheReplicasWithinTheRoundingOfABf16Sum) {
  const std::vector<std::string> settings = baton_test::plus(
      mlp_on("1f1b", 1), {"world.data_parallel=2", "optimizer.momentum=0", "run.steps=1"});
  const auto bf16 = baton_test::launch(
      kBaton, 4, baton_test::plus(settings, {"precision.reduce=bf16"}), "reduce-bf16");
  ASSERT_EQ(bf16.command.exit_code, 0) << bf16.command.output;
  EXPECT_THAT(bf16.command.output, HasSubstr("summed in BFloat16"));
  const auto reference = baton_test::compare_with_torch(
      bf16, 4, baton_test::plus(settings, {"precision.reduce=bf16"}));
  EXPECT_EQ(reference.exit_code, 0) << reference.output;

  const auto fp32 = baton_test::launch(kBaton, 4, settings, "reduce-fp32");
  ASSERT_EQ(fp32.command.exit_code, 0) << fp32.command.output;
  int differing = 0;
  for (const auto& [key, value] : bf16.dumps.at(0)) {
    if (key.rfind("grad.", 0) == 0 && !value.equal(fp32.dumps.at(0).at(key))) ++differing;
  }
  EXPECT_GT(differing, 0) << "the bf16 reduction gave float32's gradients bit for bit";
  // Against the float32 reference, the bf16 sums are far outside the float32 tolerance.
  const auto strict = baton_test::compare_with_torch(bf16, 4, settings);
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
}

// precision.params: bf16 against Megatron's arithmetic (torch_reference.py's Bf16Module): a
// bfloat16 copy of the model runs each microbatch (float32 inputs cast in, outputs cast out
// for a float32 loss, no autocast), its bfloat16 gradients are added into the float32
// masters' .grad after every microbatch's backward, AdamW steps the masters and they are cast
// back. The same bf16 ops on the same rows again; what can differ is the order of float32
// sums, so the float32 tolerances hold. The tie's two holders (embedding and head, different
// stages) fold their gradients separately, as Megatron's embedding group does.
class Bf16Params : public testing::TestWithParam<PrecisionCase> {};

std::vector<std::string> with_bf16_params(const std::vector<std::string>& settings) {
  return baton_test::plus(settings, {"precision.compute=bf16", "precision.params=bf16"});
}

// Every "param.<name>" of a dump or a checkpoint's rank file is float32.
void expect_float32_parameters(const std::map<std::string, at::Tensor>& entries) {
  for (const auto& [key, value] : entries) {
    if (key.rfind("param.", 0) == 0) {
      EXPECT_EQ(value.scalar_type(), at::kFloat) << key;
    }
  }
}

TEST_P(Bf16Params, TrainsAsMegatronsBf16Loop) {
  const std::vector<std::string> settings = with_bf16_params(GetParam().settings);
  const int ranks = GetParam().ranks;
  const auto run = baton_test::launch(kBaton, ranks, settings, "bf16-params-" + GetParam().name);
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  // What the optimizer, the dump and the checkpoints hold are the float32 masters.
  expect_float32_parameters(run.dumps.at(0));
  const auto reference = baton_test::compare_with_torch(run, ranks, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

// ZB-V's W (gradients written by the split backward, not by an accumulator) and a V's
// first and last stage on one rank; the GPT recipe on 1F1B and as PP2xDP2 (the replicas'
// buckets read the masters' gradients).
INSTANTIATE_TEST_SUITE_P(
    Schedules, Bf16Params,
    testing::Values(
        PrecisionCase{"mlp_1f1b", mlp_on("1f1b", 1)}, PrecisionCase{"mlp_zbv", mlp_on("zbv", 2)},
        PrecisionCase{"gpt_recipe", gpt_recipe("off")},
        PrecisionCase{"gpt_recipe_zbv_recompute",
                      baton_test::plus(gpt_recipe("on"),
                                       {"schedule.name=zbv", "schedule.stages_per_rank=2"})},
        PrecisionCase{"gpt_recipe_pp2_dp2",
                      baton_test::plus(gpt_recipe("[1]"), {"world.data_parallel=2"}), 4}),
    [](const testing::TestParamInfo<PrecisionCase>& info) { return info.param.name; });

// The comparison tells float32 parameters under autocast apart from bf16 ones.
TEST(Bf16ParamsReference, RefusesARunWithFloat32Parameters) {
  const std::vector<std::string> settings =
      baton_test::plus(gpt_recipe("off"), {"precision.compute=bf16"});
  const auto run = baton_test::launch(kBaton, 2, settings, "bf16-params-reference-fp32");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const auto reference =
      baton_test::compare_with_torch(run, 2, baton_test::plus(settings, {"precision.params=bf16"}));
  EXPECT_EQ(reference.exit_code, 1) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("differ from the reference"));
}

// A checkpoint holds the float32 masters; --resume loads them and casts them into the
// stages, so the resumed run goes on bit for bit as the uninterrupted one.
TEST(Bf16ParamsCheckpoint, HoldTheFloat32MastersAndResumeBitForBit) {
  const std::vector<std::string> settings =
      with_bf16_params(baton_test::plus(gpt_recipe("off"), {"run.steps=4", "checkpoint.every=2"}));
  const auto full = baton_test::launch(kBaton, 2, settings, "bf16-params-full");
  ASSERT_EQ(full.command.exit_code, 0) << full.command.output;

  const std::string dir = ::testing::TempDir() + "/launch-bf16-params-halves";
  baton_test::run_command("rm -rf '" + dir + "-runs'");  // an earlier run's checkpoints
  const auto first = baton_test::launch(
      kBaton, 2, baton_test::plus(settings, {"run.steps=2", "run.output_dir=" + dir + "-runs"}),
      "bf16-params-first-half");
  ASSERT_EQ(first.command.exit_code, 0) << first.command.output;
  const std::string checkpoint = dir + "-runs/baton/checkpoints/step-000002";
  for (int rank = 0; rank < 2; ++rank) {
    const auto written = baton_test::read_dump(checkpoint + "/rank" + std::to_string(rank) + ".pt");
    ASSERT_FALSE(written.empty()) << checkpoint;
    expect_float32_parameters(written);
  }
  const auto resumed =
      baton_test::launch(kBaton, 2, baton_test::plus(settings, {"run.output_dir=" + dir + "-runs"}),
                         "bf16-params-resumed", 180, "--resume");
  ASSERT_EQ(resumed.command.exit_code, 0) << resumed.command.output;
  EXPECT_THAT(resumed.command.output, HasSubstr("resuming after step 2"));
  for (int rank = 0; rank < 2; ++rank) {
    std::size_t params = 0;
    for (const auto& [key, value] : full.dumps.at(rank)) {
      if (key.rfind("param.", 0) != 0) continue;
      ++params;
      ASSERT_TRUE(resumed.dumps.at(rank).count(key)) << key;
      EXPECT_TRUE(at::equal(resumed.dumps.at(rank).at(key), value)) << key << " differs";
    }
    EXPECT_GT(params, 0u);
  }
}

TEST(Precision, Bf16ParamsWithoutBf16ComputeIsRefusedWithTheFix) {
  const auto run =
      baton_test::launch(kBaton, 2, baton_test::plus(mlp_on("1f1b", 1), {"precision.params=bf16"}),
                         "bf16-params-fp32-compute", 60);
  EXPECT_NE(run.command.exit_code, 0);
  EXPECT_THAT(run.command.output, HasSubstr("precision.params: bf16 computes in bf16"));
  EXPECT_THAT(run.command.output, HasSubstr("needs precision.compute: bf16"));
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
