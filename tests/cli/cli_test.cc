// The `baton` program as a user runs it: exit codes and what it prints.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_command.h"

namespace {

using baton_test::run_command;
using baton_test::run_command_stdout;
using testing::HasSubstr;
using testing::Not;

const std::string kBaton = BATON_BINARY;
const std::string kTestPlugins = BATON_TEST_PLUGIN_DIR;

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Cli, PluginsListsKindNameVersionViabilityAndRefusals) {
  const auto result = run_command(kBaton + " plugins --plugin-path " + kTestPlugins);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("KIND"));
  EXPECT_THAT(result.output, testing::ContainsRegex("schedule +test-good +1.2.3 +yes"));
  EXPECT_THAT(result.output, testing::ContainsRegex("transport +test-other-good +0.1.0 +no"));
  EXPECT_THAT(result.output, HasSubstr("test hardware is absent"));
  EXPECT_THAT(result.output, HasSubstr("refused"));
  EXPECT_THAT(result.output, HasSubstr("searched, in order:\n  " + kTestPlugins));
}

TEST(Cli, PluginsAsJson) {
  const auto result =
      run_command_stdout(kBaton + " plugins --format json --plugin-path " + kTestPlugins);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json listing = nlohmann::json::parse(result.output, nullptr, false);
  ASSERT_TRUE(listing.is_array()) << result.output;
  // The test plugin, with its kind, its file and a status of its own (not another plugin's).
  int found = 0;
  for (const auto& plugin : listing) {
    if (plugin.value("name", "") != "test-good") continue;
    ++found;
    EXPECT_EQ(plugin.value("kind", ""), "schedule") << plugin.dump();
    EXPECT_EQ(plugin.value("status", ""), "yes") << plugin.dump();
    EXPECT_EQ(plugin.value("path", ""), kTestPlugins + "/libbaton-schedule-test-good.so")
        << plugin.dump();
  }
  EXPECT_EQ(found, 1) << result.output;
}

// Listing plugins and checking a configuration read descriptors, parameter tables and model
// specs only: the built-in transports keep their tensor side in a second library, so none
// of these loads LibTorch (a second per process). The dynamic loader says what it opened.
TEST(Cli, PluginsAndConfigDoNotLoadLibTorch) {
  for (const std::string command : {"plugins", "config check", "config defaults"}) {
    const auto result = run_command("LD_DEBUG=files " + kBaton + " " + command);
    EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr("libbaton-transport-gloo.so"))
        << command << ": LD_DEBUG output expected";
    EXPECT_THAT(result.output, Not(testing::ContainsRegex("file=[^ ]*libtorch")))
        << command << " loaded LibTorch";
  }
}

// The launcher hosts the store on world.port when the configuration sets it (it used to pick
// a free port whatever the YAML said), and a port another run holds is refused at once,
// naming it, instead of two runs joining each other.
TEST(Cli, LaunchHostsTheStoreOnTheConfiguredPortAndRefusesOneInUse) {
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  socklen_t length = sizeof(address);
  getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string port = std::to_string(ntohs(address.sin_port));
  const auto result =
      run_command("timeout -k 5 60 " + kBaton + " launch -n 2 --no-env --set world.port=" + port +
                  " --set run.steps=1");
  close(holder);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("cannot host the tcp store at 127.0.0.1:" + port));
  EXPECT_THAT(result.output, HasSubstr("another run, or another store, uses this port"));
  EXPECT_THAT(result.output, Not(HasSubstr("[rank 0]"))) << "ranks were started";
}

TEST(Cli, ConfigCheckPointsAtTheTypoAndSuggests) {
  const std::string path =
      write_file("typo.yaml", "run:\n  steps: 2\nschedule:\n  name: 1f1b\n  microbaches: 8\n");
  const auto result = run_command(kBaton + " config check " + path);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr(path + ":5:3: unknown key 'schedule.microbaches'"));
  EXPECT_THAT(result.output, HasSubstr("did you mean 'microbatches'?"));
}

TEST(Cli, ConfigCheckResolvesPluginParametersAndPrintsOrigins) {
  const std::string path = write_file("plugins.yaml",
                                      "schedule:\n"
                                      "  name: test-good\n"
                                      "  params: {label: x, depth: 3}\n"
                                      "transport:\n"
                                      "  name: test-other-good\n"
                                      "plugins:\n"
                                      "  path: [" +
                                          kTestPlugins + "]\n");
  const auto result = run_command(kBaton + " config check " + path + " --set run.steps=9");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("depth: 3"));
  EXPECT_THAT(result.output, HasSubstr("# " + path + ":3:"));
  EXPECT_THAT(result.output, HasSubstr("steps: 9"));
  EXPECT_THAT(result.output, HasSubstr("# OK: " + path + " is valid"));
}

// A relative plugins.path in the YAML is the file's neighbour, wherever baton runs from.
TEST(Cli, ARelativePluginPathIsTakenFromTheYamlsFolder) {
  const std::string dir = testing::TempDir() + "/relative-plugins";
  run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "/project/plugins' && cp '" +
              kTestPlugins + "'/libbaton-schedule-test-good.so '" + dir + "/project/plugins/'");
  std::ofstream(dir + "/project/run.yaml")
      << "schedule:\n  name: test-good\n  params: {label: x}\nplugins:\n  path: [plugins]\n";
  const auto result =
      run_command("cd / && " + kBaton + " config check '" + dir + "/project/run.yaml'");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("is valid"));
}

TEST(Cli, ConfigCheckRejectsUnknownPluginParameter) {
  const std::string path = write_file("badparam.yaml",
                                      "schedule:\n"
                                      "  name: test-good\n"
                                      "  params:\n"
                                      "    label: x\n"
                                      "    detph: 3\n"
                                      "transport: {name: test-other-good}\n"
                                      "plugins: {path: [" +
                                          kTestPlugins + "]}\n");
  const auto result = run_command(kBaton + " config check " + path);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr(path + ":5:5: unknown key 'schedule.params.detph'"));
  EXPECT_THAT(result.output, HasSubstr("did you mean 'depth'?"));
}

TEST(Cli, ConfigCheckNamesWhereAMissingPluginWasSelected) {
  const std::string path = write_file("missing.yaml",
                                      "schedule:\n  name: no-such-schedule\n"
                                      "plugins: {path: [" +
                                          kTestPlugins + "]}\n");
  const auto result = run_command(kBaton + " config check " + path);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr(path + ":2:9: schedule.name: cannot load schedule plugin "
                                              "'no-such-schedule'"));
  EXPECT_THAT(result.output, HasSubstr("(missing)"));
}

// Everything that would fail only at launch, or be misread silently, is refused by `config
// check` with the value's origin — never "valid".
TEST(Cli, ConfigCheckRefusesWhatALaunchWouldFailOnOrMisread) {
  const std::string dir = ::testing::TempDir() + "/config-check-refusals";
  run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  std::ofstream(dir + "/twice.yaml") << "schedule:\n  microbatches: 4\n  microbatches: 8\n";
  std::ofstream(dir + "/two-documents.yaml") << "run:\n  steps: 3\n---\nrun:\n  steps: 9\n";
  std::ofstream(dir + "/newline-name.yaml") << "run:\n  name: \"a\\nb\"\n";
  std::vector<std::pair<std::string, std::string>> cases = {
      {"--set run.log_every=4294967296", "run.log_every must be at most 2147483647"},
      {"--set run.steps=2147483648", "run.steps must be at most 2147483647"},
      {"--set world.heartbeat_s=0.01",
       "world.heartbeat_s must be 0 (off) or a number of seconds from 1 to 604800 (a week), got "
       "0.01; a shorter period blames healthy ranks"},
      {"--set run.threads=100000", "run.threads must be from 0 (automatic) to "},
      {"--set world.bucket_mb=0",
       "world.bucket_mb must be a size in MiB from 9.53674e-07 to 65536"},
      {"--set world.bucket_mb=1e9", "world.bucket_mb must be a size in MiB from 9.53674e-07"},
      {"--set schedule.memory_limit_mb=-1", "schedule.memory_limit_mb must be 0 (no limit) or"},
      {"--set transport.params.timeout_s=-1",
       "transport.params.timeout_s must be a number of seconds from 0 to 604800"},
      {"--set transport.params.timeout_s=nan",
       "transport.params.timeout_s must be a number of seconds from 0 to 604800"},
      {"--set schedule.memory_limit_mb=nan", "schedule.memory_limit_mb must be 0 (no limit)"},
      {"'" + dir + "/newline-name.yaml'",
       "must be a plain folder name (no '/' or control characters"},
      {"--set validation.validators=[shape_dtype,finitee]",
       "validation.validators: 'finitee' is neither built in"},
      {"--set model.loss=" + dir + "/missing-loss.pt",
       "model.loss: '" + dir + "/missing-loss.pt' does not exist"},
      {"'" + dir + "/twice.yaml'",
       "twice.yaml:3:3: duplicate key 'schedule.microbatches' (first at "},
      {"'" + dir + "/two-documents.yaml'", "two-documents.yaml:3:1: a second YAML document"},
      {"'" + dir + "'", "configuration file '" + dir + "': it is a directory"},
      {"--set run.output_dir=", "run.output_dir is empty"},
      // (model.path: any existing file; config check does not load it.)
      {"--set model.name=torchscript --set model.path=" + dir +
           "/twice.yaml --set 'model.params.inputs=[\"float32[16777216,16777216]\"]'",
       "one sample would hold more than 1073741824 elements"},
  };
  cases.push_back({"--set world.device=gpu", "world.device must be one of cpu, cuda, got 'gpu'"});
  if (!BATON_TORCH_CUDA) {
    // Debian's LibTorch: no tensor can be placed on a GPU, said before anything starts.
    cases.push_back({"--set world.device=cuda",
                     "world.device: cuda, but this baton is built against a LibTorch without "
                     "CUDA"});
  }
  for (const auto& [arguments, expected] : cases) {
    const auto result = run_command(kBaton + " config check --no-env " + arguments);
    EXPECT_NE(result.exit_code, 0) << arguments << "\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr(expected)) << arguments;
    EXPECT_THAT(result.output, Not(HasSubstr("is valid"))) << arguments;
  }
}

TEST(Cli, LaunchRefusesTwoRankCounts) {
  const auto result = run_command(kBaton + " launch -n 2 -n 3 --no-env");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("--nproc"));
  EXPECT_THAT(result.output, Not(HasSubstr("ranks finished")));
}

TEST(Cli, ConfigDefaultsPrintsEveryOptionAndPluginTables) {
  const auto result = run_command(kBaton + " config defaults --plugin-path " + kTestPlugins);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("schedule.microbatches (int, default 4)"));
  EXPECT_THAT(result.output, HasSubstr("BATON_SCHEDULE_MICROBATCHES"));
  EXPECT_THAT(result.output, HasSubstr("schedule.params.depth (int, default 2)"));
  EXPECT_THAT(result.output, HasSubstr("schedule.params.label (string, required)"));
  EXPECT_THAT(result.output, HasSubstr("model.params.d_model"));
}

TEST(Cli, UnknownCommandAndOptionSuggest) {
  auto result = run_command(kBaton + " plugin");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.output, HasSubstr("did you mean 'plugins'?"));
  result = run_command(kBaton + " plugins --formt json");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.output, HasSubstr("unknown option --formt (did you mean 'format'?)"));
}

// Every command answers --help with its own usage, generated from the options it declares
// (the front end's and those baton-runtime and baton-bench answer alike).
TEST(Cli, EveryCommandHasItsOwnHelp) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"", {"Commands:", "launch", "plan", "bench", "version"}},
      {"plan", {"Usage: baton plan", "--schedule", "--ranks", "--plugin-path", "--format"}},
      {"plugins", {"Usage: baton plugins", "--format", "--plugin-path"}},
      {"launch", {"Usage: baton launch", "-n,--nproc", "--set", "--resume", "--dump-dir"}},
      {"run", {"Usage: baton run", "--set", "--resume", "--no-env"}},
      {"export", {"Usage: baton export", "CHECKPOINT", "--out"}},
      {"config", {"Usage: baton config", "check", "defaults"}},
      {"config check", {"Usage: baton config check", "--set", "--no-env"}},
      {"bench", {"Usage: baton bench", "transport", "pipeline", "sweep"}},
      {"bench transport", {"Usage: baton bench transport", "--sizes", "--no-reference"}},
      {"bench sweep", {"Usage: baton bench sweep", "--schedules", "--steps"}},
  };
  for (const auto& [command, expected] : commands) {
    const auto result = run_command(kBaton + " " + command + " --help");
    EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.output;
    for (const auto& text : expected) EXPECT_THAT(result.output, HasSubstr(text)) << command;
    // Internal commands and options stay out of the help.
    EXPECT_THAT(result.output, Not(HasSubstr("bench-record"))) << command;
    EXPECT_THAT(result.output, Not(HasSubstr("transport-rank"))) << command;
  }
}

TEST(Cli, WrongCommandLinesAreUsageErrorsWithTheCommandsUsage) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"launch configs/quickstart.yaml", {"--nproc is required", "Usage: baton launch"}},
      {"launch -n 0", {"must be an integer from 1 to 256, got '0'"}},
      {"run a.yaml b.yaml", {"`baton run` does not take 'b.yaml'", "Usage: baton run"}},
      {"config chek", {"unknown command 'chek' (did you mean 'check'?)"}},
      {"config", {"`baton config` needs a command: check or defaults"}},
      {"export", {"CHECKPOINT is required", "Usage: baton export"}},
      {"plugins --format yaml", {"--format: must be table or json, got 'yaml'"}},
      {"", {"`baton` needs a command"}},
  };
  for (const auto& [arguments, expected] : cases) {
    const auto result = run_command(kBaton + " " + arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.output;
    for (const auto& text : expected) EXPECT_THAT(result.output, HasSubstr(text)) << arguments;
  }
  // An option given twice keeps the last value, as overrides appended by a script expect.
  const auto result =
      run_command(kBaton + " plugins --format table --format json --plugin-path " + kTestPlugins);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.front(), '[') << result.output;
}

TEST(Cli, VersionNamesAbiAndLibTorch) {
  const auto result = run_command(kBaton + " version");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_THAT(result.output,
              testing::ContainsRegex("plugin ABI [0-9]+\\.[0-9]+, LibTorch [0-9.]+"));
}

}  // namespace

namespace {

const std::string kGoodSchedule = kTestPlugins + "/libbaton-schedule-test-good.so";

TEST(CliPlan, PrintsTableAndSimulationSummary) {
  const auto result = run_command(kBaton + " plan --schedule " + kGoodSchedule +
                                  " --ranks 2 --microbatches 3 --param label=x");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, testing::ContainsRegex("Rank 0 +Rank 1"));
  EXPECT_THAT(result.output, testing::ContainsRegex("Step 0: 0F0 +1F0"));
  // GPipe order, F=1, B=2: bubble (r-1)/(m+r-1) = 1/4.
  EXPECT_THAT(result.output, HasSubstr("makespan 12.000, bubble 25.0%"));
}

// --data-parallel: each stage's REDUCE_GRAD follows its last backward and, costed at 5, ends
// the step 5 after each rank's last B (rank 1's ends at 10, rank 0's at 12: makespan 17).
TEST(CliPlan, DataParallelAddsAndCostsTheGradientReduction) {
  const auto result =
      run_command(kBaton + " plan --schedule " + kGoodSchedule +
                  " --ranks 2 --microbatches 3 --param label=x --data-parallel 2 --costs "
                  "F=1,B=2,reduce=5");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("0REDUCE_GRAD"));
  EXPECT_THAT(result.output, HasSubstr("1REDUCE_GRAD"));
  EXPECT_THAT(result.output, HasSubstr("makespan 17.000"));
  EXPECT_THAT(result.output, HasSubstr("gradient all-reduce 5.000 (5.000 exposed)"));
}

// --recompute: each B runs its stage's forward again (F=1, B=2 becomes B=3): GPipe's
// makespan (m + r - 1)(F + B) = 4 x 4, the bubble unchanged; a stage the plan lacks is refused.
TEST(CliPlan, RecomputeCostsOneMoreForwardPerBackward) {
  const auto result = run_command(kBaton + " plan --schedule " + kGoodSchedule +
                                  " --ranks 2 --microbatches 3 --param label=x --recompute on");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("makespan 16.000, bubble 25.0%"));
  EXPECT_THAT(result.output, HasSubstr("recompute: stages 0 1: each B or I runs the stage's "
                                       "forward again"));
  const auto refused = run_command(kBaton + " plan --schedule " + kGoodSchedule +
                                   " --ranks 2 --microbatches 3 --param label=x --recompute 0,5");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output,
              HasSubstr("--recompute: '5' is not one of the plan's stages (0 to 1)"));
}

TEST(CliPlan, WritesCsvWithCommsToAFile) {
  const std::string out = testing::TempDir() + "/plan_comms.csv";
  const auto result = run_command(kBaton + " plan --schedule " + kGoodSchedule +
                                  " --ranks 2 --microbatches 2 --param label=x --format csv-comms "
                                  "--out " +
                                  out);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::ifstream file(out);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("0SEND_F0"));
  EXPECT_THAT(text, HasSubstr("1RECV_F0"));
}

// The JSON summary is self-consistent (busy + idle = makespan on every rank, the bubble their
// ratio) and the trace holds exactly the compute the summary counts, on the rank it names.
TEST(CliPlan, JsonAndTraceFormats) {
  auto result = run_command_stdout(kBaton + " plan --schedule " + kGoodSchedule +
                                   " --ranks 2 --microbatches 2 --param label=x --format json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json summary = nlohmann::json::parse(result.output, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << result.output;
  EXPECT_EQ(summary["num_ranks"], 2);
  ASSERT_EQ(summary["ranks"].size(), 2u) << result.output;
  const double makespan = summary["makespan"].get<double>();
  double idle = 0;
  std::vector<double> busy;
  for (const auto& rank : summary["ranks"]) {
    EXPECT_DOUBLE_EQ(rank["busy_time"].get<double>() + rank["idle_time"].get<double>(), makespan)
        << rank.dump();
    EXPECT_NEAR(rank["bubble_fraction"].get<double>(), rank["idle_time"].get<double>() / makespan,
                1e-6)
        << rank.dump();
    // test-good keeps `depth` (2) microbatches in flight at most.
    EXPECT_GE(rank["peak_activations"].get<int>(), 1) << rank.dump();
    EXPECT_LE(rank["peak_activations"].get<int>(), 2) << rank.dump();
    idle += rank["idle_time"].get<double>();
    busy.push_back(rank["busy_time"].get<double>());
  }
  EXPECT_NEAR(summary["bubble_fraction"].get<double>(), idle / (2 * makespan), 1e-6);

  result = run_command_stdout(kBaton + " plan --schedule " + kGoodSchedule +
                              " --ranks 2 --microbatches 2 --param label=x --format trace");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json trace = nlohmann::json::parse(result.output, nullptr, false);
  ASSERT_TRUE(trace.is_object()) << result.output;
  ASSERT_TRUE(trace["traceEvents"].is_array()) << result.output;
  // Compute is thread 0 of each rank: 2 microbatches x (F + B) = 4 spans, as long in all as
  // the rank's busy time (µs in the trace, cost units in the summary: 1 unit = 1000).
  std::vector<double> compute(2, 0.0);
  std::vector<int> spans(2, 0);
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X" || event.value("tid", -1) != 0) continue;
    const int rank = event["pid"].get<int>();
    ASSERT_TRUE(rank == 0 || rank == 1) << event.dump();
    EXPECT_EQ(event["name"].get<std::string>().front(), static_cast<char>('0' + rank))
        << event.dump();
    compute[rank] += event["dur"].get<double>();
    ++spans[rank];
  }
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(spans[rank], 4) << "rank " << rank;
    EXPECT_DOUBLE_EQ(compute[rank], busy[rank] * 1000) << "rank " << rank;
  }
}

TEST(CliPlan, RejectsBadOptionsWithSuggestions) {
  auto result = run_command(kBaton + " plan --schedule " + kGoodSchedule +
                            " --ranks 2 --microbatches 2 --param label=x --costs F=1,Q=2");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.output, HasSubstr("unknown cost 'Q'"));
  result = run_command(kBaton + " plan --schedule " + kGoodSchedule +
                       " --ranks 0 --microbatches 2 --param label=x");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.output, HasSubstr("--ranks: must be an integer from 1 to 16384, got '0'"));
  EXPECT_THAT(result.output, HasSubstr("Usage: baton plan"));
  // Within each option's range, but a plan of 10^8 (stage, microbatch) pairs: refused with
  // the limits, not a std::bad_alloc.
  result = run_command(kBaton + " plan --schedule 1f1b --ranks 10000 --microbatches 10000");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("cannot plan 10000 ranks x 1 stages per rank x 10000 "
                                       "microbatches"));
  EXPECT_THAT(result.output, Not(HasSubstr("bad_alloc")));
  result =
      run_command(kBaton + " plan --schedule " + kGoodSchedule + " --ranks 2 --microbatches 2");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("schedule.params.label is required"));
  result = run_command(kBaton + " plan --schedule no-such --ranks 2 --microbatches 2");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("cannot load schedule plugin 'no-such'"));
}

}  // namespace

namespace {

// Every command's --help: exit 0, its one-line purpose and usage, every option it takes —
// and nothing run (no measurement, no bench, no rank).
TEST(CliHelp, EveryCommandDescribesItselfWithoutRunning) {
  struct Help {
    std::string command;
    std::string purpose;
    std::vector<std::string> options;
  };
  const std::vector<Help> helps = {
      {"tune",
       "measure the configured model and rank every schedule",
       {"--set", "--no-env", "--profile", "--top", "--format"}},
      {"bench pipeline",
       "the configured training step for real",
       {"--set", "--steps", "--warmup", "--timeout", "--format"}},
      {"bench tune",
       "the schedule search's top candidates, each trained for real",
       {"--set", "--steps", "--warmup", "--timeout", "--top", "--rounds", "--out", "--format"}},
      {"bench plan",
       "how long compiling and simulating a plan takes",
       {"--schedule", "--ranks", "--stages-per-rank", "--microbatches", "--sizes", "--repeat",
        "--format", "--plugin-path"}},
      {"config defaults", "print every option with its type, default and doc", {"--plugin-path"}},
      {"version", "print versions (baton, plugin ABI, LibTorch)", {}},
  };
  for (const Help& help : helps) {
    const auto result = run_command(kBaton + " " + help.command + " --help");
    EXPECT_EQ(result.exit_code, 0) << help.command << "\n" << result.output;
    EXPECT_EQ(result.output.rfind(help.purpose, 0), 0u) << help.command << "\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr("Usage: baton " + help.command + " [OPTIONS]"));
    EXPECT_THAT(result.output, HasSubstr("-h,--help"));
    for (const auto& option : help.options) {
      EXPECT_THAT(result.output, HasSubstr("  " + option + " ")) << help.command;
    }
    for (const char* ran : {"[rank ", "profile:", "step 1/", "plugin ABI ", "chosen:"}) {
      EXPECT_THAT(result.output, testing::Not(HasSubstr(ran))) << help.command << " ran";
    }
  }
}

// Bad YAML — a syntax error, a value of the wrong type, one out of range — is refused the same
// way by `config check` and by `launch`, naming file:line:column and the key, and launch starts
// no rank and makes no run folder.
TEST(CliConfig, BadYamlIsRefusedAlikeByCheckAndLaunchBeforeAnyRank) {
  const std::string dir = testing::TempDir() + "/bad-yaml";
  run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run:\n  steps: [1\n", "syntax.yaml:3:1: YAML syntax error: end of sequence flow not found"},
      {"run:\n  steps: many\n", "type.yaml:2:10: run.steps: expected int, got 'many'"},
      {"schedule:\n  microbatches: 0\n",
       "range.yaml:2:17: schedule.microbatches must be at least 1, got 0"},
  };
  const std::vector<std::string> names = {"syntax", "type", "range"};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string file = dir + "/" + names[i] + ".yaml";
    std::ofstream(file) << cases[i].first;
    const auto checked = run_command(kBaton + " config check '" + file + "'");
    EXPECT_EQ(checked.exit_code, 1) << checked.output;
    EXPECT_THAT(checked.output, HasSubstr(cases[i].second)) << checked.output;
    const auto launched = run_command(kBaton + " launch -n 2 --no-env '" + file +
                                      "' --set run.output_dir='" + dir + "/runs'");
    EXPECT_EQ(launched.exit_code, 1) << launched.output;
    EXPECT_THAT(launched.output, HasSubstr(cases[i].second)) << launched.output;
    EXPECT_THAT(launched.output, testing::Not(HasSubstr("[rank "))) << launched.output;
    EXPECT_FALSE(std::filesystem::exists(dir + "/runs")) << names[i];
  }
}

}  // namespace
