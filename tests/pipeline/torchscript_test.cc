// A model scripted in Python, saved, and named in the config trains through `baton launch`
// exactly like the unpipelined model, under the parameter names Python gives it; models
// whose stages do not fit together, or whose forward is more than its children, fail at
// setup with messages that say so, on every rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include "batches.h"
#include "baton/config.h"
#include "baton/unit_chain.h"
#include "launch_run.h"
#include "model_catalog.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;
constexpr int kSteps = 3;

class TorchScriptPipeline : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    // A folder per process: CTest runs the cases in parallel processes.
    models_ =
        new std::string(::testing::TempDir() + "/scripted-models-" + std::to_string(::getpid()));
    const auto result = baton_test::run_command(std::string(BATON_PYTHON) + " '" +
                                                BATON_SCRIPT_MODELS + "' '" + *models_ + "'");
    python_output_ = new std::string(result.output);
    scripted_ = result.exit_code == 0;
  }
  static void TearDownTestSuite() {
    delete models_;
    delete python_output_;
  }
  void SetUp() override {
    // bootstrap installs python3-torch for the tests; without it there is nothing to load.
    if (!scripted_) GTEST_SKIP() << "scripting the models failed: " << *python_output_;
  }

  static std::string model(const std::string& file) { return *models_ + "/" + file; }

  static std::vector<std::string> settings(const std::string& file) {
    return {"model.name=torchscript",
            "model.path=" + model(file),
            "model.params.input_shape=[12]",
            "model.params.num_classes=5",
            "data.source=synthetic",
            "data.batch_size=8",
            "schedule.name=1f1b",
            "schedule.microbatches=4",
            "optimizer.name=sgd",
            "optimizer.lr=0.1",
            "run.steps=" + std::to_string(kSteps),
            "run.seed=3",
            "world.timeout_s=30"};
  }

  static std::string* models_;
  static std::string* python_output_;
  static bool scripted_;
};

std::string* TorchScriptPipeline::models_ = nullptr;
std::string* TorchScriptPipeline::python_output_ = nullptr;
bool TorchScriptPipeline::scripted_ = false;

TEST_F(TorchScriptPipeline, TrainsLikeTheUnpipelinedModelUnderPythonsNames) {
  // The reference: the same file, the same batches, one process, no pipeline.
  baton::ConfigOverrides overrides;
  overrides.set = settings("chain.pt");
  overrides.use_environment = false;
  baton::Config config = baton::load_config_text("", "test", overrides);
  auto reference = baton_models::build_configured_model(config, 3);
  const auto batches = baton_models::make_batch_source(config, reference, "");
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (int unit = 0; unit < reference.chain->num_units(); ++unit) {
    for (auto& param : reference.chain->unit_parameters(unit)) named.push_back(param);
  }
  std::vector<at::Tensor> params;
  for (auto& entry : named) params.push_back(entry.second);
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.1));
  std::map<std::string, torch::Tensor> first_grads;
  double first_loss = 0;
  for (int step = 1; step <= kSteps; ++step) {
    const auto batch = batches->batch(step);
    sgd.zero_grad();
    const auto loss =
        reference.loss(baton::run_whole_chain(*reference.chain, batch.inputs), batch.targets);
    loss.backward();
    if (step == 1) {
      first_loss = loss.item<double>();
      for (auto& entry : named) first_grads[entry.first] = entry.second.grad().clone();
    }
    sgd.step();
  }

  const auto result = baton_test::launch(kBaton, 2, settings("chain.pt"), "torchscript");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  std::map<std::string, torch::Tensor> grads, final_params;
  double loss = 0;
  for (const auto& dump : result.dumps) {
    for (const auto& [key, value] : dump) {
      if (key.rfind("grad.", 0) == 0) grads[key.substr(5)] = value;
      if (key.rfind("param.", 0) == 0) final_params[key.substr(6)] = value;
      if (key == "loss") loss = value[0].item<double>();
    }
  }
  EXPECT_NEAR(loss, first_loss, 1e-5 * std::abs(first_loss) + 1e-6);

  // Exactly Python's parameter names, split across the two ranks.
  std::ifstream names_file(model("chain.names"));
  std::vector<std::string> python_names;
  for (std::string line; std::getline(names_file, line);) python_names.push_back(line);
  std::vector<std::string> pipelined_names;
  for (const auto& entry : grads) pipelined_names.push_back(entry.first);
  std::sort(python_names.begin(), python_names.end());
  EXPECT_EQ(pipelined_names, python_names);
  EXPECT_THAT(python_names, testing::Contains("blocks.3.fc.weight"));

  for (const auto& [name, expected] : first_grads) {
    ASSERT_TRUE(grads.count(name)) << name;
    EXPECT_TRUE(torch::allclose(grads[name], expected, 1e-5, 1e-6)) << name;
  }
  for (auto& entry : named) {
    ASSERT_TRUE(final_params.count(entry.first)) << entry.first;
    EXPECT_TRUE(torch::allclose(final_params[entry.first], entry.second.detach(), 1e-5, 1e-6))
        << entry.first;
  }
}

TEST_F(TorchScriptPipeline, StagesThatDoNotFitFailAtSetupOnBothRanks) {
  auto run = settings("mismatched.pt");
  run.push_back("model.cuts=[5]");  // stage 1 is the head, which expects 20 features
  const auto result = baton_test::launch(kBaton, 2, run, "mismatched");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  for (const std::string rank : {"[rank 0]", "[rank 1]"}) {
    EXPECT_THAT(out, HasSubstr(rank + " rank " + rank.substr(6, 1) +
                               " failed: setup failed: stage 1 (rank 1) cannot take the "
                               "outputs of stage 0 (rank 0) ([2, 16] float32): "
                               "RuntimeError: mat1 and mat2 shapes cannot be multiplied "
                               "(2x16 and 20x5)\n"))
        << out;
  }
}

TEST_F(TorchScriptPipeline, AForwardThatIsMoreThanItsChildrenIsRefused) {
  const auto result = baton_test::launch(kBaton, 2, settings("residual.pt"), "residual");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  EXPECT_THAT(out, HasSubstr("the TorchScript model's forward is not the chain of its children "
                             "(embed -> blocks.0 -> blocks.1 -> blocks.2 -> blocks.3 -> head)"));
}

}  // namespace
