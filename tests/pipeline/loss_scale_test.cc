// precision.loss_scale: dynamic — fp16 loss scaling as torch.cuda.amp.GradScaler runs it,
// tested on the CPU (LibTorch 1.13 has no fp16 autocast there; the scaler's logic is the same
// on any device). A power-of-two scale multiplies every gradient exactly and 1 / scale
// divides it back exactly, so a scaled run that never overflows equals the unscaled one bit
// for bit. An overflow is injected (BATON_INJECT_FAILURE ...,by=inf) into one backward of one
// stage of one replica of PP2 x DP2: every rank must skip that step — the reference skips the
// same update and nothing else, and it holds every rank's parameters against it — the scale
// halves, and a resumed run continues the scale and the weights bit for bit.
#include <ATen/ops/equal.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gpt_recipe_settings.h"
#include "launch_run.h"
#include "read_text.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;

// The GPT recipe (tied head, AdamW groups, clipping, ignore_index) as PP2 x DP2.
std::vector<std::string> recipe(int steps) {
  return baton_test::plus(baton_test::gpt_recipe(),
                          {"world.data_parallel=2", "run.steps=" + std::to_string(steps)});
}

const std::vector<std::string> kScaled = {"precision.loss_scale=dynamic",
                                          "precision.loss_scale_growth_interval=2"};

// Replica 0's stage 0 (rank 0) overflows in the backward of microbatch 1 of step 3.
const std::string kOverflowAtStep3 = "BATON_INJECT_FAILURE=rank=0,step=3,action=0B1,by=inf ";

baton_test::LaunchResult launch_with(const std::string& environment,
                                     const std::vector<std::string>& settings,
                                     const std::string& name, const std::string& extra = "") {
  const std::string dir = ::testing::TempDir() + "/launch-" + name;
  baton_test::run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  std::string command =
      environment + "timeout -k 5 180 " + kBaton + " launch -n 4 --no-env --dump-dir '" + dir + "'";
  bool output_dir = false;
  for (const auto& setting : settings) {
    command += " --set '" + setting + "'";
    output_dir = output_dir || setting.rfind("run.output_dir=", 0) == 0;
  }
  if (!output_dir) command += " --set run.output_dir='" + dir + "/runs'";
  command += " " + extra;
  baton_test::LaunchResult result;
  result.dump_dir = dir;
  result.command = baton_test::run_command(command);
  for (int rank = 0; rank < 4; ++rank) {
    result.dumps.push_back(baton_test::read_dump(dir + "/rank" + std::to_string(rank) + ".pt"));
  }
  return result;
}

// Each step line's (loss_scale, skipped) from a metrics.jsonl.
std::vector<std::pair<double, bool>> scales_in(const std::string& metrics) {
  std::vector<std::pair<double, bool>> scales;
  std::istringstream lines(baton_test::read_text(metrics));
  std::string line;
  while (std::getline(lines, line)) {
    const auto record = nlohmann::json::parse(line, nullptr, false);
    if (!record.is_object() || !record.contains("step")) continue;
    scales.emplace_back(record.value("loss_scale", 0.0), record.value("skipped", false));
  }
  return scales;
}

void expect_same_parameters(const baton_test::LaunchResult& a, const baton_test::LaunchResult& b) {
  for (int rank = 0; rank < 4; ++rank) {
    std::size_t params = 0;
    for (const auto& [key, value] : a.dumps.at(rank)) {
      if (key.rfind("param.", 0) != 0) continue;
      ++params;
      ASSERT_TRUE(b.dumps.at(rank).count(key)) << "rank " << rank << ": " << key;
      EXPECT_TRUE(at::equal(b.dumps.at(rank).at(key), value))
          << "rank " << rank << ": " << key << " differs";
    }
    EXPECT_GT(params, 0u) << "rank " << rank << " dumped no parameters";
  }
}

TEST(LossScale, ScaledGradientsTrainBitForBitAsUnscaledOnes) {
  for (const std::string compute : {"fp32", "bf16"}) {
    SCOPED_TRACE("precision.compute: " + compute);
    const auto settings = baton_test::plus(recipe(4), {"precision.compute=" + compute});
    const auto unscaled = launch_with("", settings, "loss-scale-off-" + compute);
    ASSERT_EQ(unscaled.command.exit_code, 0) << unscaled.command.output;
    const auto scaled =
        launch_with("", baton_test::plus(settings, kScaled), "loss-scale-on-" + compute);
    ASSERT_EQ(scaled.command.exit_code, 0) << scaled.command.output;
    EXPECT_THAT(scaled.command.output, HasSubstr("loss scale 65536"));
    expect_same_parameters(unscaled, scaled);
  }
}

TEST(LossScale, AnOverflowOnOneStageSkipsTheStepOnEveryRankAndHalvesTheScale) {
  // Untied: no sum carries stage 0's inf into stage 1 — only the agreement tells ranks 1 and 3.
  const auto settings =
      baton_test::plus(recipe(6), baton_test::plus(kScaled, {"model.params.tie_embeddings=false"}));
  const auto run = launch_with(kOverflowAtStep3, settings, "loss-scale-overflow");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  EXPECT_THAT(run.command.output, HasSubstr("step 3 skipped: a gradient overflowed"));
  EXPECT_THAT(run.command.output, HasSubstr("1 step skipped"));
  // Doubled after 2 finite steps, halved by the overflow, doubled after 2 more.
  const std::vector<std::pair<double, bool>> expected = {{65536, false}, {65536, false},
                                                         {131072, true}, {65536, false},
                                                         {65536, false}, {131072, false}};
  EXPECT_EQ(scales_in(run.dump_dir + "/runs/baton/metrics.jsonl"), expected);
  // Every rank, both replicas, against a loop that skips step 3's update and nothing else.
  const auto reference =
      baton_test::compare_with_torch(run, 4, baton_test::plus(settings, {"--skip-steps=3"}));
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  // The comparison can fail: the same run against a loop that updates at step 3.
  const auto updating = baton_test::compare_with_torch(run, 4, settings);
  EXPECT_EQ(updating.exit_code, 1) << updating.output;
  EXPECT_THAT(updating.output, HasSubstr("differ from the reference"));
}

TEST(LossScale, AResumedRunContinuesTheScaleBitForBit) {
  const auto settings =
      baton_test::plus(recipe(6), baton_test::plus(kScaled, {"checkpoint.every=2"}));
  const auto full = launch_with(kOverflowAtStep3, settings, "loss-scale-full");
  ASSERT_EQ(full.command.exit_code, 0) << full.command.output;

  const std::string runs = ::testing::TempDir() + "/launch-loss-scale-halves-runs";
  baton_test::run_command("rm -rf '" + runs + "'");
  const auto first = launch_with(
      kOverflowAtStep3, baton_test::plus(settings, {"run.steps=4", "run.output_dir=" + runs}),
      "loss-scale-first-half");
  ASSERT_EQ(first.command.exit_code, 0) << first.command.output;
  const auto manifest = nlohmann::json::parse(
      baton_test::read_text(runs + "/baton/checkpoints/step-000004/manifest.json"), nullptr, false);
  ASSERT_TRUE(manifest.is_object() && manifest.contains("loss_scale")) << manifest.dump();
  // After step 4: halved at 3, one finite step since, one skipped in the run.
  EXPECT_EQ(manifest["loss_scale"]["scale"], 65536.0);
  EXPECT_EQ(manifest["loss_scale"]["growth_tracker"], 1);
  EXPECT_EQ(manifest["loss_scale"]["skipped_steps"], 1);

  const auto resumed = launch_with("", baton_test::plus(settings, {"run.output_dir=" + runs}),
                                   "loss-scale-resumed", "--resume");
  ASSERT_EQ(resumed.command.exit_code, 0) << resumed.command.output;
  EXPECT_THAT(resumed.command.output, HasSubstr("resuming after step 4"));
  // Step 5 completes the growth interval the checkpoint was in: step 6 runs at 2^17.
  EXPECT_EQ(scales_in(runs + "/baton/metrics.jsonl"),
            scales_in(full.dump_dir + "/runs/baton/metrics.jsonl"));
  EXPECT_THAT(resumed.command.output, HasSubstr("1 step skipped"));
  expect_same_parameters(full, resumed);
}

TEST(LossScale, AnOverflowAtTheLowestScaleStopsTheRun) {
  const auto run = launch_with(
      kOverflowAtStep3,
      baton_test::plus(recipe(4), {"precision.loss_scale=dynamic", "precision.loss_scale_init=1",
                                   "precision.loss_scale_min=1"}),
      "loss-scale-at-minimum");
  EXPECT_NE(run.command.exit_code, 0) << run.command.output;
  EXPECT_THAT(run.command.output,
              HasSubstr("step 3: a gradient is an inf or a nan at the lowest loss scale"));
  EXPECT_THAT(run.command.output, HasSubstr("training diverged"));
}

TEST(LossScale, AMinimumAboveTheInitialScaleIsRefused) {
  const auto run =
      baton_test::launch(kBaton, 2,
                         {"model.name=mlp", "precision.loss_scale=dynamic",
                          "precision.loss_scale_init=128", "precision.loss_scale_min=1024"},
                         "loss-scale-min-above-init", 60);
  EXPECT_NE(run.command.exit_code, 0);
  EXPECT_THAT(
      run.command.output,
      HasSubstr("precision.loss_scale_min (1024) is above precision.loss_scale_init (128)"));
}

}  // namespace
