// model.loss: mse and a TorchScript loss module train through the pipeline to the losses,
// gradients and parameters plain PyTorch computes (tests/pipeline/torch_reference.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/script.h>
#include <utility>

#include "batches.h"
#include "baton/config.h"
#include "baton/error.h"
#include "launch_run.h"
#include "model_catalog.h"
#include "model_specs.h"
#include "torch_reference.h"
#include "training/config_sections.h"

namespace {

// The program's own sections (model, data, optimizer, checkpoint, trace), as baton-runtime
// adds them before it reads a configuration.
[[maybe_unused]] const bool kAppSections = (baton_app::add_app_config_sections(), true);

const std::string kBaton = BATON_BINARY;

std::vector<std::string> settings_for(const std::string& loss) {
  return {"model.name=mlp",
          "model.params.in_features=12",
          "model.params.hidden=16",
          "model.params.layers=2",
          "model.params.out_features=6",
          "model.loss=" + loss,
          "data.source=synthetic",
          "data.batch_size=16",
          "schedule.name=1f1b",
          "schedule.microbatches=4",
          "transport.name=gloo",
          "optimizer.name=sgd",
          "optimizer.lr=0.05",
          "run.steps=2",
          "run.seed=5",
          "world.timeout_s=60"};
}

baton::Config config_for(const std::string& loss) {
  baton::ConfigOverrides overrides;
  overrides.set = settings_for(loss);
  overrides.use_environment = false;
  baton::Config config = baton::load_config_text("", "test", overrides);
  return baton_models::with_model_params(std::move(config));  // a run's front door does it
}

// Plain PyTorch computes the reference: mse with torch.nn.functional, a scripted loss by
// loading the same file with torch.jit.load.
void expect_pipeline_matches(const std::string& loss, const std::string& name) {
  const auto result = baton_test::launch(kBaton, 2, settings_for(loss), name);
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference = baton_test::compare_with_torch(result, 2, settings_for(loss));
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

TEST(ConfiguredLoss, MeanSquaredErrorMatchesPlainPyTorch) {
  expect_pipeline_matches("mse", "loss-mse");
}

TEST(ConfiguredLoss, TorchScriptLossMatchesPlainPyTorch) {
  // A loss module saved as TorchScript, as torch.jit.save(torch.jit.script(loss)) would.
  const std::string path = ::testing::TempDir() + "/l1_loss.pt";
  torch::jit::Module loss("L1Loss");
  loss.define(R"(
    def forward(self, output, target):
        return (output - target).abs().mean()
  )");
  loss.save(path);
  expect_pipeline_matches(path, "loss-scripted");
}

TEST(ConfiguredLoss, UnknownLossNamesTheSettingAndTheChoices) {
  // Refused when the configuration is read, before any model is built.
  try {
    config_for("hinge");
    FAIL() << "an unknown loss was accepted";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(), testing::HasSubstr("model.loss must be one of cross_entropy, mse, "
                                                 "from_model, got 'hinge'"));
  }
}

TEST(ConfiguredLoss, FileThatIsNotAModuleIsRefused) {
  const std::string path = ::testing::TempDir() + "/not_a_loss.pt";
  std::ofstream(path) << "not a zip archive";
  baton::Config config = config_for(path);
  try {
    baton_models::build_model(baton_models::read_model_settings(config), 5);
    FAIL() << "a file that is not a TorchScript module was accepted as the loss";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(), testing::HasSubstr(path)) << error.what();
    EXPECT_THAT(error.what(), testing::HasSubstr("model.loss")) << error.what();
  }
}

TEST(ConfiguredLoss, CrossEntropyKeepsClassTargets) {
  baton::Config config = config_for("cross_entropy");
  auto model = baton_models::build_model(baton_models::read_model_settings(config), 5);
  EXPECT_FALSE(model.value_targets);
  const auto batch =
      baton_models::make_batch_source(baton_models::read_data_settings(config), model, "")
          ->batch(1);
  EXPECT_EQ(batch.targets.scalar_type(), torch::kLong);
}

}  // namespace

namespace {

std::string scripted_loss(const std::string& name, const std::string& body) {
  const std::string path = ::testing::TempDir() + "/" + name + ".pt";
  torch::jit::Module loss(name);
  loss.define("\ndef forward(self, output, target):\n    return " + body + "\n");
  loss.save(path);
  return path;
}

// A scripted loss that returns a constant has no gradient: training would change nothing.
// Refused at set-up, before a step, naming the setting.
TEST(ConfiguredLoss, ALossWithoutAGradientIsRefusedAtSetUp) {
  const std::string path = scripted_loss("ConstantLoss", "torch.ones([])");
  const auto result = baton_test::launch(kBaton, 2, settings_for(path), "loss-constant");
  EXPECT_NE(result.command.exit_code, 0) << result.command.output;
  EXPECT_THAT(result.command.output,
              testing::HasSubstr("model.loss '" + path +
                                 "' returns a value with no gradient with respect to the "
                                 "model's output"));
  EXPECT_THAT(result.command.output, testing::Not(testing::HasSubstr("step 1/")));
}

// A loss that is nan stops the run at that step, saying where to look, instead of training
// on nan to the end and exiting 0.
TEST(ConfiguredLoss, ANanLossStopsTheRunAtItsStep) {
  const std::string path =
      scripted_loss("NanLoss", "(output - target).abs().mean() * float('nan')");
  const auto result = baton_test::launch(kBaton, 2, settings_for(path), "loss-nan");
  EXPECT_NE(result.command.exit_code, 0) << result.command.output;
  EXPECT_THAT(result.command.output,
              testing::HasSubstr("step 1: the loss is nan from the first batch"));
  EXPECT_THAT(result.command.output, testing::Not(testing::HasSubstr("all 2 ranks finished")));
}

}  // namespace
