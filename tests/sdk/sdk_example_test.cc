// The SDK as a third party uses it: `cmake --install` baton into a fresh prefix, build the
// example schedule plugin (plugins/examples/warmup_1f1b) and the example transport
// (plugins/examples/store_transport) against that prefix only (also with
// LibTorch hidden: a schedule needs only the plan layer), check its plans without ranks, and train
// with it through YAML — by name on BATON_PLUGIN_PATH and by path — getting what plain PyTorch
// trains from the same file. Plans that are wrong are refused before any tensor moves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "launch_run.h"
#include "read_text.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;

const std::string kSource = BATON_SOURCE_DIR;
const std::string kBuild = BATON_BUILD_DIR;
const std::string kExample = kSource + "/plugins/examples/warmup_1f1b";

// One prefix and one example build, shared by the cases (CTest runs them one at a time:
// RESOURCE_LOCK), reused across runs so a rerun only rebuilds what changed.
const std::string kWork = kBuild + "/sdk-example";
const std::string kPrefix = kWork + "/prefix";
const std::string kExampleBuild = kWork + "/build";
const std::string kPlugin = kExampleBuild + "/libbaton-schedule-warmup_1f1b.so";
// A third-party transport (plugins/examples/store_transport), built the same way with LibTorch.
const std::string kTransportExample = kSource + "/plugins/examples/store_transport";
const std::string kTransportBuild = kWork + "/transport-build";
const std::string kTransportPlugin = kTransportBuild + "/libbaton-transport-store.so";

class SdkExample : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    log_ = new std::string;
    auto step = [](const std::string& command) {
      const auto result = baton_test::run_command(command);
      *log_ += "$ " + command + "\n" + result.output;
      return result.exit_code == 0;
    };
    // An example, built against the prefix only. Configured once (finding LibTorch takes a
    // while); the build re-runs CMake itself when the prefix changed.
    auto build = [&step](const std::string& source, const std::string& binary) {
      return step("test -f '" + binary + "/CMakeCache.txt' || cmake -S '" + source + "' -B '" +
                  binary + "' -G Ninja -DCMAKE_PREFIX_PATH='" + kPrefix +
                  "' -DCMAKE_CXX_COMPILER_LAUNCHER='" + BATON_CXX_LAUNCHER + "'") &&
             step("cmake --build '" + binary + "'");
    };
    // The headers are installed afresh: one that is no longer installed must not linger.
    ready_ = step("rm -rf '" + kPrefix + "/include'") &&
             step("cmake --install '" + kBuild + "' --prefix '" + kPrefix + "'") &&
             build(kExample, kExampleBuild) && build(kTransportExample, kTransportBuild);
  }
  static void TearDownTestSuite() { delete log_; }
  void SetUp() override { ASSERT_TRUE(ready_) << "installing or building failed:\n" << *log_; }

  static std::string* log_;
  static bool ready_;
};

std::string* SdkExample::log_ = nullptr;
bool SdkExample::ready_ = false;

using baton_test::read_text;

TEST_F(SdkExample, IsBuiltAgainstTheInstalledPackageOnly) {
  const std::string cache = read_text(kExampleBuild + "/CMakeCache.txt");
  EXPECT_THAT(cache, HasSubstr("baton_DIR:PATH=" + kPrefix + "/lib/cmake/baton"));
  EXPECT_THAT(cache, testing::Not(HasSubstr(kSource + "/core")));
}

// The installed headers are the plugin author's interfaces, each complete on its own; the
// runtime's internals stay in the source tree.
TEST_F(SdkExample, InstallsTheSdkHeadersAndNoInternals) {
  const std::string include = kPrefix + "/include/baton/";
  for (const char* header :
       {"plugin.h", "schedule.h", "schedule_support.h", "transport.h", "validator.h", "log.h",
        "wait_notice.h", "plan/simulate.h", "testing/schedule_grid.h"}) {
    EXPECT_TRUE(std::ifstream(include + header).good()) << header;
  }
  for (const char* internal :
       {"runtime/executor.h", "runtime/recv_buffers.h", "stores.h", "store_keys.h", "config.h",
        "config_plugins.h", "unit_chain.h", "files.h", "step_error.h"}) {
    EXPECT_FALSE(std::ifstream(include + internal).good()) << internal << " is installed";
  }
  // Every installed header that needs no LibTorch compiles alone against the prefix.
  for (const char* header : {"plugin.h", "schedule.h", "schedule_support.h", "log.h",
                             "wait_notice.h", "params.h", "plugin_loader.h", "plan/compile.h",
                             "plan/format.h", "plan/chrome_trace.h", "testing/schedule_grid.h"}) {
    const auto result = baton_test::run_command("echo '#include <baton/" + std::string(header) +
                                                ">' | c++ -std=c++17 -fsyntax-only -I'" + kPrefix +
                                                "/include' -x c++ -");
    EXPECT_EQ(result.exit_code, 0) << header << "\n" << result.output;
  }
}

// A schedule is pure data: its plugin builds against the plan layer alone, with LibTorch
// hidden from CMake, and neither its compile lines nor its shared library mention LibTorch.
TEST_F(SdkExample, BuildsAndChecksItsPlansWithoutLibTorch) {
  const std::string build = kWork + "/build-plan-layer-only";
  const auto configure = baton_test::run_command(
      "rm -rf '" + build + "' && cmake -S '" + kExample + "' -B '" + build +
      "' -G Ninja -DCMAKE_PREFIX_PATH='" + kPrefix +
      "' -DCMAKE_DISABLE_FIND_PACKAGE_Torch=TRUE -DCMAKE_EXPORT_COMPILE_COMMANDS=ON" +
      " -DCMAKE_CXX_COMPILER_LAUNCHER='" + BATON_CXX_LAUNCHER + "'");
  ASSERT_EQ(configure.exit_code, 0) << configure.output;
  const auto compiled = baton_test::run_command("cmake --build '" + build + "'");
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  const std::string commands = read_text(build + "/compile_commands.json");
  EXPECT_THAT(commands, HasSubstr("warmup_1f1b.cc"));
  EXPECT_THAT(commands, testing::Not(HasSubstr("torch"))) << commands;
  const auto needed = baton_test::run_command("readelf -d '" + build +
                                              "/libbaton-schedule-warmup_1f1b.so' | grep NEEDED");
  EXPECT_THAT(needed.output, HasSubstr("libbaton_plan.so"));
  EXPECT_THAT(needed.output, testing::Not(testing::ContainsRegex("torch|c10|baton_core")))
      << needed.output;
  const auto check = baton_test::run_command("'" + build + "/check_warmup_1f1b'");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_THAT(check.output, HasSubstr("every plan is sound"));
  const auto linked = baton_test::run_command("ldd '" + build + "/check_warmup_1f1b'");
  EXPECT_THAT(linked.output, testing::Not(testing::ContainsRegex("libtorch|libc10")))
      << linked.output;
}

TEST_F(SdkExample, ItsCheckProgramValidatesLowersAndSimulatesAGrid) {
  const auto result = baton_test::run_command("'" + kExampleBuild + "/check_warmup_1f1b'");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("warmup_1f1b(extra_warmup=3): ranks=4 stages_per_rank=1 "
                                       "microbatches=8: ok, bubble"));
  EXPECT_THAT(result.output, HasSubstr("refused by the schedule (warmup_1f1b needs microbatches "
                                       ">= ranks (stages)"));
  EXPECT_THAT(result.output, HasSubstr("every plan is sound"));
}

TEST_F(SdkExample, TheInstalledBatonPlansWithItByPath) {
  const auto result =
      baton_test::run_command("'" + kPrefix + "/bin/baton' plan --schedule '" + kPlugin +
                              "' --ranks 2 --microbatches 4 --param extra_warmup=2");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // Rank 0 runs 1 + 2 forwards before its first backward, then alternates.
  EXPECT_THAT(result.output, HasSubstr("Step 0: 0F0    1F0"));
  EXPECT_THAT(result.output, HasSubstr("Step 2: 0F2"));
  EXPECT_THAT(result.output, HasSubstr("Step 3: 0F3"));
  EXPECT_THAT(result.output, HasSubstr("Step 4: 0B0"));
}

// The example's YAML, run by the installed `baton` with the plugin found by name, trains what
// plain PyTorch trains from the same file (tests/pipeline/torch_reference.py).
TEST_F(SdkExample, TrainsByNameFromYamlLikeTheUnpipelinedModel) {
  const std::string yaml = kExample + "/warmup_1f1b.yaml";
  const std::string dir = ::testing::TempDir() + "/sdk-train";
  baton_test::run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  const auto result =
      baton_test::run_command("BATON_PLUGIN_PATH='" + kExampleBuild + "' timeout -k 5 180 '" +
                              kPrefix + "/bin/baton' launch -n 2 --no-env '" + yaml +
                              "' --dump-dir '" + dir + "' --set run.output_dir='" + dir + "/runs'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("plan: schedule warmup_1f1b (" + kPlugin + ")"));
  const auto reference = baton_test::compare_dumps_with_torch(dir, 2, {}, "", yaml);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("comparisons match")) << reference.output;
}

TEST_F(SdkExample, IsSelectedByPathInYaml) {
  const std::string dir = ::testing::TempDir() + "/sdk-by-path";
  baton_test::run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  std::string yaml = read_text(kExample + "/warmup_1f1b.yaml");
  const std::string by_name = "  name: warmup_1f1b\n";
  ASSERT_NE(yaml.find(by_name), std::string::npos);
  yaml.replace(yaml.find(by_name), by_name.size(), "  name: " + kPlugin + "\n");
  std::ofstream(dir + "/by_path.yaml") << yaml;
  const auto result = baton_test::run_command(
      "timeout -k 5 180 '" + kPrefix + "/bin/baton' launch -n 2 --no-env '" + dir +
      "/by_path.yaml' --set run.steps=1 --set run.output_dir='" + dir + "/runs' --dump-dir '" +
      dir + "/dumps'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // The plugin at that path planned the run (BATON_PLUGIN_PATH is not set here), and what it
  // trained is right.
  EXPECT_THAT(result.output, HasSubstr("plan: schedule warmup_1f1b (" + kPlugin + ")"));
  const auto reference = baton_test::compare_dumps_with_torch(dir + "/dumps", 2, {"run.steps=1"},
                                                              "", dir + "/by_path.yaml");
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

// A transport written by a third party against the installed SDK (every message through the
// run's store), selected by path in YAML, trains what plain PyTorch trains.
TEST_F(SdkExample, AThirdPartyTransportTrainsLikePlainPyTorch) {
  const std::string dir = ::testing::TempDir() + "/sdk-transport";
  baton_test::run_command("rm -rf '" + dir + "'");
  const std::string yaml = kTransportExample + "/store_transport.yaml";
  const auto result = baton_test::run_command(
      "timeout -k 5 180 '" + kPrefix + "/bin/baton' launch -n 2 --no-env '" + yaml +
      "' --set transport.name='" + kTransportPlugin + "' --set run.output_dir='" + dir +
      "/runs' --dump-dir '" + dir + "/dumps'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("; transport store (" + kTransportPlugin + ")"));
  const auto reference = baton_test::compare_dumps_with_torch(dir + "/dumps", 2, {}, "", yaml);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("comparisons match")) << reference.output;
}

// A plugin whose plans are wrong is refused by `baton launch` with the validator's or the
// simulator's report, and no rank gets as far as a training step.
TEST(InvalidSchedulePlugin, IsRefusedBeforeAnyTensorMoves) {
  const std::string plugin =
      std::string(BATON_TEST_PLUGIN_DIR) + "/libbaton-schedule-test-invalid-plan.so";
  const std::vector<std::pair<std::string, std::string>> defects = {
      {"missing_microbatch", "stage 1 never runs F for microbatch 1 (expected 1F1 on rank 1)"},
      {"w_before_i", "1W0 runs before 1I0 (step 2) on rank 1"},
      {"cycle", "cannot finish: every unfinished rank waits on something that never happens"},
  };
  for (const auto& [defect, expected] : defects) {
    const std::string dir = ::testing::TempDir() + "/invalid-" + defect;
    const auto result = baton_test::run_command(
        "timeout -k 5 120 '" + std::string(BATON_BINARY) + "' launch -n 2 --no-env" +
        " --set schedule.name='" + plugin + "' --set schedule.params.defect=" + defect +
        " --set schedule.microbatches=2 --set model.name=mlp --set data.source=synthetic" +
        " --set data.batch_size=4 --set run.output_dir='" + dir + "'");
    EXPECT_EQ(result.exit_code, 1) << defect << ":\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr(expected)) << defect;
    EXPECT_THAT(result.output, HasSubstr("Step 0: 0F0")) << defect << ": the plan table";
    // A step that is wrong is marked; a microbatch missing everywhere has no step to mark.
    if (defect != "missing_microbatch") {
      EXPECT_THAT(result.output, HasSubstr("<-- ERROR HERE")) << defect;
    }
    EXPECT_THAT(result.output, testing::Not(HasSubstr("step 1/"))) << defect;
    // `config check` compiles the plan too: it never calls such a run valid.
    const auto checked = baton_test::run_command(
        "'" + std::string(BATON_BINARY) + "' config check --no-env --set schedule.name='" + plugin +
        "' --set schedule.params.defect=" + defect +
        " --set schedule.microbatches=2 --set model.name=mlp --set data.source=synthetic" +
        " --set data.batch_size=4");
    EXPECT_NE(checked.exit_code, 0) << defect << ":\n" << checked.output;
    EXPECT_THAT(checked.output, HasSubstr(expected)) << defect;
    EXPECT_THAT(checked.output, testing::Not(HasSubstr("is valid"))) << defect;
  }
}

}  // namespace
