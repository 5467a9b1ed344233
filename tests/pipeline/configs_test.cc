// Every runnable file in configs/ runs for two steps as shipped (from the repository root,
// as their headers say) and trains what plain PyTorch trains from the same file
// (tests/pipeline/torch_reference.py --config). A config whose transport was not built, or needs
// hardware this machine lacks (NCCL without GPUs), is skipped with the reason
// (tests/support/plugin_for_test.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>

#include "baton/config.h"
#include "baton/error.h"
#include "baton/plugin_loader.h"
#include "free_port.h"
#include "launch_run.h"
#include "plugin_for_test.h"
#include "torch_reference.h"
#include "training/config_sections.h"

namespace {

// The program's own sections (model, data, optimizer, checkpoint, trace), as baton-runtime
// adds them before it reads a configuration.
[[maybe_unused]] const bool kAppSections = (baton_app::add_app_config_sections(), true);

const std::string kSource = BATON_SOURCE_DIR;

std::vector<std::string> shipped_configs() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kSource + "/configs")) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class ShippedConfig : public testing::TestWithParam<std::string> {};

TEST_P(ShippedConfig, RunsTwoSteps) {
  const std::string path = kSource + "/configs/" + GetParam() + ".yaml";
  baton::ConfigOverrides overrides;
  overrides.use_environment = false;
  // Read from the repository's root, as the launch below runs: the shipped configs name their
  // files from there, and file keys are checked when the configuration is read.
  struct InFolder {
    std::filesystem::path was = std::filesystem::current_path();
    explicit InFolder(const std::string& folder) { std::filesystem::current_path(folder); }
    ~InFolder() { std::filesystem::current_path(was); }
  };
  if (!BATON_TORCH_CUDA && GetParam().find("gpu") != std::string::npos) {
    // world.device: cuda cannot exist with a CPU-only LibTorch (config check refuses it, as
    // Cli.ConfigCheckRefusesWhatALaunchWouldFailOnOrMisread checks); scripts/gpu-check runs it.
    GTEST_SKIP() << "configs/" << GetParam() << ".yaml needs a CUDA LibTorch (world.device: cuda)";
  }
  const baton::Config config = [&] {
    const InFolder root(kSource);
    return baton::load_config_file(path, overrides);
  }();
  const std::string transport = config.section("transport").get_string("name");
  // Skips only where the plugin was not built or its hardware is absent (NCCL without a GPU);
  // a gloo or UCX plugin that is there but cannot run fails.
  BATON_REQUIRE_PLUGIN(plugin, baton::PluginKind::kTransport, transport);
  const int ranks = static_cast<int>(config.section("world").get_int("ranks"));
  const std::string out = ::testing::TempDir() + "/config-" + GetParam();
  const std::string dumps = out + "-dumps";
  // A fresh folder: an earlier suite's checkpoints there would be refused without --resume.
  const auto result = baton_test::run_command(
      "rm -rf '" + out + "' '" + dumps + "' && cd '" + kSource + "' && timeout -k 5 200 '" +
      BATON_BINARY + "' launch -n " + std::to_string(ranks) + " --no-env 'configs/" + GetParam() +
      ".yaml' --set run.steps=2 --set run.output_dir='" + out + "' --dump-dir '" + dumps + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output,
              testing::HasSubstr("launch: all " + std::to_string(ranks) + " ranks finished"));
  // What it trained is what plain PyTorch trains from the same file: every config here is
  // one the reference can express (a model built in, or TorchScript files), held to the
  // suite's one tolerance rule (docs/testing.md, "Tolerances").
  const auto reference = baton_test::compare_dumps_with_torch(
      dumps, ranks, {"run.steps=2"}, "", "configs/" + GetParam() + ".yaml", kSource);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_THAT(reference.output, testing::HasSubstr("comparisons match")) << reference.output;
}

constexpr const char* kNoMpirun =
    "mpirun is not installed (scripts/bootstrap test installs openmpi-bin)";

bool mpirun_installed() {
  return baton_test::run_command("command -v mpirun").exit_code == 0;
}

// `baton run` on `ranks` ranks started by Open MPI, two steps of `config` into `out` (dumps in
// `out`-dumps), on a port of their own, so that two such tests never meet.
baton_test::CommandResult run_under_mpirun(int ranks, const std::string& config,
                                           const std::string& out) {
  // A fresh folder: an earlier suite's checkpoints there would be refused without --resume.
  return baton_test::run_command(
      "rm -rf '" + out + "' '" + out + "-dumps' && cd '" + kSource +
      "' && timeout -k 5 200 mpirun --allow-run-as-root --oversubscribe -n " +
      std::to_string(ranks) + " '" + BATON_BINARY + "' run --no-env " + config +
      " --set run.steps=2 --set run.output_dir='" + out + "' --dump-dir '" + out +
      "-dumps' --set world.port=" + std::to_string(baton_test::unused_loopback_port()) +
      " < /dev/null");
}

// The ranks Open MPI started trained what plain PyTorch trains from the same file.
void expect_like_torch(int ranks, const std::string& config, const std::string& out) {
  const auto reference = baton_test::compare_dumps_with_torch(out + "-dumps", ranks,
                                                              {"run.steps=2"}, "", config, kSource);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_THAT(reference.output, testing::HasSubstr("comparisons match")) << reference.output;
}

// `baton run` as one rank of a job Open MPI started: rank and world size come from
// OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE, rank 0 hosts the store.
TEST(Launchers, AConfigRunsUnderMpirun) {
  if (!mpirun_installed()) GTEST_SKIP() << kNoMpirun;
  const std::string out = ::testing::TempDir() + "/mpirun";
  const auto result = run_under_mpirun(2, "configs/gpipe-gloo.yaml", out);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, testing::HasSubstr("done: 2 steps"));
  EXPECT_TRUE(std::filesystem::exists(out + "/gpipe-gloo/metrics.jsonl"));
  expect_like_torch(2, "configs/gpipe-gloo.yaml", out);
}

// Two replicas of a 2-rank pipeline under Open MPI: the layout comes from world.data_parallel,
// the ranks from OMPI_COMM_WORLD_*.
TEST(Launchers, DataParallelRunsUnderMpirun) {
  if (!mpirun_installed()) GTEST_SKIP() << kNoMpirun;
  const std::string out = ::testing::TempDir() + "/mpirun-dp";
  const auto result = run_under_mpirun(4, "configs/1f1b-dp2-gloo.yaml", out);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, testing::HasSubstr("layout: 2 replicas x 2 pipeline ranks"));
  EXPECT_THAT(result.output, testing::HasSubstr("done: 2 steps"));
  expect_like_torch(4, "configs/1f1b-dp2-gloo.yaml", out);
}

INSTANTIATE_TEST_SUITE_P(Configs, ShippedConfig, testing::ValuesIn(shipped_configs()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
