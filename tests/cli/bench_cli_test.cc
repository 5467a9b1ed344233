// `baton bench transport` as a user runs it: two real rank processes, a real plugin, the
// printed fields — never the speeds, which depend on the machine and its load.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin_for_test.h"
#include "run_command.h"

namespace {

using baton_test::run_command;
using baton_test::run_command_stdout;
using testing::ContainsRegex;
using testing::HasSubstr;
using testing::Not;

const std::string kBaton = BATON_BINARY;
const std::string kPluginDir = std::string(BATON_BUILD_DIR) + "/lib/baton";

// The bench's JSON: an array with one object per size, every field present.
nlohmann::json parse_sizes(const std::string& output) {
  const nlohmann::json sizes = nlohmann::json::parse(output, nullptr, false);
  EXPECT_TRUE(sizes.is_array()) << output;
  for (const auto& size : sizes) {
    for (const char* field :
         {"transport", "size_bytes", "iterations", "window", "repeats", "gbps", "latency_us",
          "reference_gbps", "reference_latency_us", "reference", "reference_unavailable"}) {
      EXPECT_TRUE(size.contains(field)) << field << " in " << size.dump();
    }
  }
  return sizes.is_array() ? sizes : nlohmann::json::array();
}

// Small and quick: the tests check what is printed, not how fast anything is. --timeout
// bounds the run far below CTest's limit.
const std::string kQuickGloo =
    " bench transport --transport gloo --sizes 1K,64K --iterations 20 --repeats 1 --timeout 60";

TEST(CliBench, GlooTablePrintsPluginReferenceAndRatiosPerSize) {
  BATON_REQUIRE_PLUGIN(gloo, baton::PluginKind::kTransport, "gloo");
  const auto result = run_command(kBaton + kQuickGloo);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("transport gloo "));
  EXPECT_THAT(result.output, HasSubstr("reference: raw gloo"));
  EXPECT_THAT(result.output, HasSubstr("windowed stream"));
  EXPECT_THAT(result.output, ContainsRegex("size +iters +GB/s +ref GB/s +bw ratio +lat us +ref "
                                           "lat us +lat ratio +lat diff us"));
  // Every column has a number: plugin and reference were both measured.
  const std::string number = " +[0-9]+\\.[0-9]+";
  for (const char* size : {"1K", "64K"}) {
    EXPECT_THAT(result.output,
                ContainsRegex(std::string("\n +") + size + " +20" + number + number + number +
                              number + number + number + " +[-+][0-9]+\\.[0-9]+\n"))
        << size;
  }
  EXPECT_THAT(result.output, Not(HasSubstr("n/a")));
}

TEST(CliBench, GlooJsonHasOneObjectPerSizeWithEveryField) {
  BATON_REQUIRE_PLUGIN(gloo, baton::PluginKind::kTransport, "gloo");
  const auto result = run_command_stdout(kBaton + kQuickGloo + " --format json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json sizes = parse_sizes(result.output);
  ASSERT_EQ(sizes.size(), 2u) << result.output;
  const std::int64_t expected_bytes[] = {1024, 65536};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& size = sizes[i];
    EXPECT_EQ(size["transport"], "gloo");
    EXPECT_EQ(size["size_bytes"], expected_bytes[i]);
    EXPECT_EQ(size["iterations"], 20);
    for (const char* figure : {"gbps", "latency_us", "reference_gbps", "reference_latency_us"}) {
      EXPECT_TRUE(size[figure].is_number() && size[figure].get<double>() > 0)
          << figure << " in " << size.dump();
    }
    EXPECT_THAT(size["reference"].get<std::string>(), testing::StartsWith("raw gloo"));
    EXPECT_TRUE(size["reference_unavailable"].is_null());
  }
}

TEST(CliBench, WithoutReferenceSaysSoAndPrintsNull) {
  BATON_REQUIRE_PLUGIN(gloo, baton::PluginKind::kTransport, "gloo");
  const auto result =
      run_command_stdout(kBaton + kQuickGloo + " --sizes 1K --no-reference --format json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json sizes = parse_sizes(result.output);
  ASSERT_EQ(sizes.size(), 1u) << result.output;
  EXPECT_TRUE(sizes[0]["gbps"].is_number());
  EXPECT_TRUE(sizes[0]["reference_gbps"].is_null());
  EXPECT_TRUE(sizes[0]["reference_latency_us"].is_null());
  EXPECT_TRUE(sizes[0]["reference"].is_null());
  EXPECT_EQ(sizes[0]["reference_unavailable"], "disabled by --no-reference");
}

TEST(CliBench, UnknownTransportListsThePluginsFound) {
  const auto result = run_command(kBaton + " bench transport --transport glooo --sizes 1K");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("cannot load transport plugin 'glooo'"));
  EXPECT_THAT(result.output, HasSubstr("transport plugins found:"));
  BATON_REQUIRE_PLUGIN(gloo, baton::PluginKind::kTransport, "gloo");
  EXPECT_THAT(result.output, HasSubstr("did you mean 'gloo'?"));
  EXPECT_THAT(result.output, HasSubstr("\n  gloo (" + kPluginDir));
}

TEST(CliBench, BadSizesAreUsageErrors) {
  for (const char* sizes : {"1K,abc", "1K,,64K", "0", "64Q", "2G", "1K,"}) {
    const auto result =
        run_command(kBaton + " bench transport --transport gloo --sizes '" + sizes + "'");
    EXPECT_EQ(result.exit_code, 2) << sizes << "\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr("--sizes: ")) << sizes;
    EXPECT_THAT(result.output, HasSubstr("Usage: baton bench transport")) << sizes;
  }
}

TEST(CliBench, BadOptionsAreUsageErrors) {
  auto expect_usage = [](const std::string& args, const std::string& message) {
    const auto result = run_command(kBaton + " bench " + args);
    EXPECT_EQ(result.exit_code, 2) << args << "\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr(message)) << args;
  };
  expect_usage("", "`baton bench` needs a command: transport, pipeline, sweep, plan or tune");
  expect_usage("transprt --transport gloo",
               "unknown command 'transprt' (did you mean 'transport'?)");
  expect_usage("transport", "--transport is required");
  expect_usage("transport --transport gloo --iterations 0",
               "--iterations: must be an integer from 1 to 1000000, got '0'");
  expect_usage("transport --transport gloo --format yaml",
               "--format: must be table or json, got 'yaml'");
  expect_usage("transport --transport gloo --sizez 1K",
               "unknown option --sizez (did you mean 'sizes'?)");
  // The internal commands are not offered to users.
  expect_usage("transport-rnk", "unknown command 'transport-rnk'; `baton bench` has: transport");
}

TEST(CliBench, UnknownTransportParameterIsRejectedBeforeAnyRankStarts) {
  BATON_REQUIRE_PLUGIN(gloo, baton::PluginKind::kTransport, "gloo");
  const auto result =
      run_command(kBaton + " bench transport --transport gloo --sizes 1K --param adress=x");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("adress"));
  EXPECT_THAT(result.output, HasSubstr("did you mean 'address'?"));
}

TEST(CliBench, RanksStillRunningAtTheDeadlineAreKilledAndReported) {
  BATON_REQUIRE_PLUGIN(gloo, baton::PluginKind::kTransport, "gloo");
  // Far more than a second's worth of 64 MiB messages: the deadline must end the run.
  const auto result = run_command(
      kBaton + " bench transport --transport gloo --sizes 64M --iterations 100000 --timeout 1");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("rank 0 was still running at the deadline and was killed"));
  EXPECT_THAT(result.output, HasSubstr("rank 1 was still running at the deadline and was killed"));
  EXPECT_THAT(result.output, HasSubstr("did not finish within --timeout 1 s"));
}

TEST(CliBench, UcxIsComparedWithUcxPerftestOrSaysWhyNot) {
  BATON_REQUIRE_PLUGIN(ucx, baton::PluginKind::kTransport, "ucx");
  const auto result =
      run_command_stdout(kBaton +
                         " bench transport --transport ucx --sizes 1K,64K --iterations 20"
                         " --repeats 1 --timeout 90 --format json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json sizes = parse_sizes(result.output);
  ASSERT_EQ(sizes.size(), 2u) << result.output;
  if (run_command("command -v ucx_perftest").exit_code != 0) {
    EXPECT_TRUE(sizes[0]["reference_gbps"].is_null());
    EXPECT_THAT(sizes[0]["reference_unavailable"].get<std::string>(),
                HasSubstr("ucx_perftest is not on PATH (Debian package ucx-utils)"));
    return;
  }
  for (const auto& size : sizes) {
    for (const char* figure : {"gbps", "latency_us", "reference_gbps", "reference_latency_us"}) {
      EXPECT_TRUE(size[figure].is_number()) << figure << " in " << size.dump();
    }
    EXPECT_THAT(size["reference"].get<std::string>(), HasSubstr("ucx_perftest"));
  }
}

TEST(CliBench, NcclThatCannotRunHereSaysWhy) {
  const auto nccl = baton_test::plugin_for_test(baton::PluginKind::kTransport, "nccl");
  if (!nccl.failure.empty()) FAIL() << nccl.failure;
  if (!nccl.plugin) GTEST_SKIP() << nccl.skip;  // not built
  if (nccl.plugin->viability().viable) GTEST_SKIP() << "nccl can run on this machine";
  const auto result = run_command(kBaton + " bench transport --transport nccl --sizes 1K");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output,
              ContainsRegex("transport 'nccl' \\(.*\\) cannot run on this machine: .+"));
}

// `baton bench plan`: every phase timed and its memory measured, the lowered plan's size right
// for the shape (1F1B on 4 ranks x 8 microbatches: 64 compute actions, and a SEND and a RECV
// per direction on each of the 3 boundaries per microbatch: 96 more), for each of --sizes.
TEST(CliBench, PlanTimesAndMeasuresEveryPhaseOfTheCompiler) {
  const auto result = run_command_stdout(
      kBaton +
      " bench plan --schedule 1f1b --stages-per-rank 1 --sizes 4x8,8x64 --repeat 3 --format json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json report = nlohmann::json::parse(result.output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << result.output;
  EXPECT_EQ(report["schedule"], "1f1b");
  EXPECT_EQ(report["repeat"], 3);
  ASSERT_EQ(report["sizes"].size(), 2u) << result.output;
  const nlohmann::json& small = report["sizes"][0];
  EXPECT_EQ(small["ranks"], 4);
  EXPECT_EQ(small["microbatches"], 8);
  EXPECT_EQ(small["lowered_actions"], 64 + 96);
  // 8 ranks x 64 microbatches: 1024 compute actions and 7 boundaries x 64 x 4 transfers.
  EXPECT_EQ(report["sizes"][1]["lowered_actions"], 1024 + 7 * 64 * 4);
  for (const auto& size : report["sizes"]) {
    std::vector<std::string> names;
    for (const auto& phase : size["phases"]) {
      names.push_back(phase["name"].get<std::string>());
      EXPECT_GE(phase["min_ms"].get<double>(), 0.0);
      EXPECT_LE(phase["min_ms"].get<double>(), phase["median_ms"].get<double>());
      EXPECT_LE(phase["median_ms"].get<double>(), phase["max_ms"].get<double>());
      EXPECT_NEAR(phase["ns_per_action"].get<double>(),
                  1e6 * phase["median_ms"].get<double>() / size["lowered_actions"].get<double>(),
                  1e-6 * phase["ns_per_action"].get<double>() + 1e-9);
      // A phase keeps at most what it held at its peak.
      EXPECT_LE(phase["retained_bytes"].get<std::int64_t>(),
                phase["peak_bytes"].get<std::int64_t>());
    }
    EXPECT_EQ(names,
              (std::vector<std::string>{"schedule build", "validate", "lower (+ completion check)",
                                        "simulate, with timeline", "simulate, totals only",
                                        "compile + simulate totals"}));
    // What the plans hold is counted: building keeps the compute plan, lowering the lowered
    // one, a simulation with its timeline the timeline; validating keeps nothing.
    EXPECT_GT(size["phases"][0]["retained_bytes"].get<std::int64_t>(), 0);
    EXPECT_EQ(size["phases"][1]["retained_bytes"].get<std::int64_t>(), 0);
    EXPECT_GT(size["phases"][2]["retained_bytes"].get<std::int64_t>(),
              size["phases"][0]["retained_bytes"].get<std::int64_t>());
    EXPECT_GT(size["phases"][3]["retained_bytes"].get<std::int64_t>(), 0);
    // Totals only: no timeline kept.
    EXPECT_LT(size["phases"][4]["retained_bytes"].get<std::int64_t>(),
              size["phases"][3]["retained_bytes"].get<std::int64_t>());
  }
  const auto table = run_command(kBaton +
                                 " bench plan --schedule 1f1b --ranks 2 --stages-per-rank 1 "
                                 "--microbatches 4 --repeat 1");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, HasSubstr("2 ranks x 1 stages x 4 microbatches (32 actions lowered)"));
  EXPECT_THAT(table.output, ContainsRegex("compile \\+ simulate totals +[0-9]+\\.[0-9]+"));
  // A shape the schedule refuses is refused in the schedule's words; a size that is no shape
  // is refused naming it.
  const auto refused = run_command(kBaton + " bench plan --schedule 1f1b --ranks 4 --repeat 1");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("1f1b"));
  const auto bad_size = run_command(kBaton + " bench plan --schedule 1f1b --sizes 4x8,4by8");
  EXPECT_NE(bad_size.exit_code, 0);
  EXPECT_THAT(bad_size.output, HasSubstr("--sizes: '4by8' must be RANKSxMICROBATCHES"));
}

}  // namespace
