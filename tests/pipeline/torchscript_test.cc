// A model scripted in Python, saved, and named in the config trains through `baton launch`
// exactly like the same file trained whole by plain PyTorch, under the parameter names Python
// gives it, also when its stages pass two tensors; models
// whose stages do not fit together, or whose forward is more than its children, fail at
// setup with messages that say so, on every rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include "launch_run.h"
#include "torch_reference.h"

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
    // bootstrap installs python3-torch for the tests: scripting must work.
    ASSERT_TRUE(scripted_) << "scripting the models failed: " << *python_output_;
  }

  static std::string model(const std::string& file) { return *models_ + "/" + file; }

  static std::vector<std::string> settings(const std::string& file) {
    return {"model.name=torchscript",
            "model.path=" + model(file),
            "model.params.input_shape=[12]",
            "model.params.num_classes=5",
            "data.source=synthetic",
            "data.batch_size=8",
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

TEST_F(TorchScriptPipeline, TrainsLikePlainPyTorchUnderPythonsNames) {
  const auto result = baton_test::launch(kBaton, 2, settings("chain.pt"), "torchscript");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  // The reference loads the same file in Python and trains its forward() whole.
  const auto reference = baton_test::compare_with_torch(result, 2, settings("chain.pt"));
  EXPECT_EQ(reference.exit_code, 0) << reference.output;

  // Exactly Python's parameter names, each on one of the two ranks.
  std::ifstream names_file(model("chain.names"));
  std::vector<std::string> python_names;
  for (std::string line; std::getline(names_file, line);) python_names.push_back(line);
  std::vector<std::string> pipelined_names;
  for (const auto& dump : result.dumps) {
    for (const auto& entry : dump) {
      if (entry.first.rfind("param.", 0) == 0) pipelined_names.push_back(entry.first.substr(6));
    }
  }
  std::sort(python_names.begin(), python_names.end());
  std::sort(pipelined_names.begin(), pipelined_names.end());
  EXPECT_EQ(pipelined_names, python_names);
  EXPECT_THAT(python_names, testing::Contains("blocks.3.fc.weight"));
}

TEST_F(TorchScriptPipeline, StagesThatPassTwoTensorsTrainLikePlainPyTorch) {
  // Every cut of split -> mix0..2 -> merge carries two tensors, forward and backward.
  for (const std::string schedule : {"1f1b", "zero_bubble"}) {
    auto run = settings("two_streams.pt");
    run.push_back("schedule.name=" + schedule);
    run.push_back("optimizer.momentum=0.9");
    const auto result = baton_test::launch(kBaton, 2, run, "two-streams-" + schedule);
    ASSERT_EQ(result.command.exit_code, 0) << schedule << "\n" << result.command.output;
    const auto reference = baton_test::compare_with_torch(result, 2, run);
    EXPECT_EQ(reference.exit_code, 0) << schedule << "\n" << reference.output;
  }
}

TEST_F(TorchScriptPipeline, StagesThatDoNotFitFailAtSetupOnBothRanks) {
  auto run = settings("mismatched.pt");
  run.push_back("schedule.name=1f1b");
  run.push_back("model.cuts=[5]");  // stage 1 is the head, which expects 20 features
  const auto result = baton_test::launch(kBaton, 2, run, "mismatched");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  for (const std::string rank : {"[rank 0]", "[rank 1]"}) {
    EXPECT_THAT(out, HasSubstr(rank + " rank " + rank.substr(6, 1) +
                               " failed: model 'torchscript' (" + model("mismatched.pt") +
                               "): 'head' cannot take the outputs of 'blocks.3' ([1, 16] "
                               "float32) (on a sample of synthetic inputs): RuntimeError: mat1 "
                               "and mat2 shapes cannot be multiplied (1x16 and 20x5)\n"))
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
