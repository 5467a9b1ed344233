// model.loss: mse and a TorchScript loss module train through the pipeline to the same
// loss and gradients as the unpipelined model, whose loss the test computes itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/script.h>

#include <functional>

#include "batches.h"
#include "baton/config.h"
#include "baton/error.h"
#include "baton/module_chain.h"
#include "baton/unit_chain.h"
#include "launch_run.h"
#include "losses.h"
#include "model_catalog.h"

namespace {

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

// The loss and gradients of step 1, unpipelined, with `loss_of(output, targets)` written
// here rather than taken from baton.
baton::Config config_for(const std::string& loss) {
  baton::ConfigOverrides overrides;
  overrides.set = settings_for(loss);
  overrides.use_environment = false;
  return baton::load_config_text("", "test", overrides);
}

using LossOf = std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)>;

std::pair<double, std::map<std::string, torch::Tensor>> reference(const std::string& loss,
                                                                  LossOf loss_of) {
  baton::Config config = config_for(loss);
  auto model = baton_models::build_configured_model(config, 5);
  EXPECT_TRUE(model.value_targets);
  const auto batch = baton_models::make_batch_source(config, model, "")->batch(1);
  EXPECT_EQ(batch.targets.scalar_type(), torch::kFloat);
  EXPECT_EQ(batch.targets.sizes(), (std::vector<std::int64_t>{16, 6}));
  auto* chain = dynamic_cast<baton::ModuleChain*>(model.chain.get());
  torch::Tensor output;
  double mean_loss = 0;
  // Four microbatches, each loss scaled by 1/4: what the pipeline accumulates.
  for (int mb = 0; mb < 4; ++mb) {
    output =
        baton::run_whole_chain(*model.chain, {batch.inputs[0].slice(0, mb * 4, mb * 4 + 4)})[0];
    const torch::Tensor value = loss_of(output, batch.targets.slice(0, mb * 4, mb * 4 + 4));
    mean_loss += value.item<double>() / 4;
    (value / 4).backward();
  }
  std::map<std::string, torch::Tensor> grads;
  for (const auto& named : chain->root()->named_parameters())
    grads[named.key()] = named.value().grad().clone();
  return {mean_loss, grads};
}

void expect_pipeline_matches(const std::string& loss, const std::string& name, LossOf loss_of) {
  const auto expected = reference(loss, loss_of);
  const auto result = baton_test::launch(kBaton, 2, settings_for(loss), name);
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  std::map<std::string, torch::Tensor> grads;
  bool saw_loss = false;
  for (const auto& dump : result.dumps) {
    for (const auto& [key, value] : dump) {
      if (key.rfind("grad.", 0) == 0) {
        EXPECT_EQ(grads.count(key.substr(5)), 0u) << key << " dumped by two ranks";
        grads[key.substr(5)] = value;
      }
      if (key == "loss") {
        saw_loss = true;
        EXPECT_NEAR(value[0].item<double>(), expected.first, 1e-5 * std::abs(expected.first));
      }
    }
  }
  EXPECT_TRUE(saw_loss) << result.command.output;
  ASSERT_EQ(grads.size(), expected.second.size()) << result.command.output;
  for (const auto& [param, grad] : expected.second) {
    ASSERT_TRUE(grads.count(param)) << param;
    EXPECT_TRUE(torch::allclose(grads[param], grad, 1e-4, 1e-6)) << param;
  }
}

TEST(ConfiguredLoss, MeanSquaredErrorMatchesUnpipelined) {
  expect_pipeline_matches("mse", "loss-mse", [](const torch::Tensor& out, const torch::Tensor& t) {
    return (out - t).pow(2).mean();
  });
}

TEST(ConfiguredLoss, TorchScriptLossMatchesUnpipelined) {
  // A loss module saved as TorchScript, as torch.jit.save(torch.jit.script(loss)) would.
  const std::string path = ::testing::TempDir() + "/l1_loss.pt";
  torch::jit::Module loss("L1Loss");
  loss.define(R"(
    def forward(self, output, target):
        return (output - target).abs().mean()
  )");
  loss.save(path);
  expect_pipeline_matches(
      path, "loss-scripted",
      [](const torch::Tensor& out, const torch::Tensor& t) { return (out - t).abs().mean(); });
}

TEST(ConfiguredLoss, UnknownLossNamesTheSettingAndTheChoices) {
  baton::Config config = config_for("hinge");
  try {
    baton_models::build_configured_model(config, 5);
    FAIL() << "an unknown loss was accepted";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(), testing::HasSubstr("model.loss: 'hinge'"));
    EXPECT_THAT(error.what(), testing::HasSubstr("cross_entropy, mse"));
  }
}

TEST(ConfiguredLoss, FileThatIsNotAModuleIsRefused) {
  const std::string path = ::testing::TempDir() + "/not_a_loss.pt";
  std::ofstream(path) << "not a zip archive";
  baton::Config config = config_for(path);
  EXPECT_THROW(baton_models::build_configured_model(config, 5), baton::ConfigError);
}

TEST(ConfiguredLoss, CrossEntropyKeepsClassTargets) {
  baton::Config config = config_for("cross_entropy");
  auto model = baton_models::build_configured_model(config, 5);
  EXPECT_FALSE(model.value_targets);
  const auto batch = baton_models::make_batch_source(config, model, "")->batch(1);
  EXPECT_EQ(batch.targets.scalar_type(), torch::kLong);
}

}  // namespace
