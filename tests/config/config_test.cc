// The configuration loader: structure, types, origins, overrides, plugin tables, and the
// messages a person sees when something is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "baton/config.h"
#include "baton/error.h"
#include "error_of.h"
#include "training/config_sections.h"

namespace {

// The program's own sections (model, data, optimizer, checkpoint, trace), as baton-runtime
// adds them before it reads a configuration.
[[maybe_unused]] const bool kAppSections = (baton_app::add_app_config_sections(), true);

using testing::HasSubstr;

template <typename Action>
std::string config_error_of(Action action) {
  try {
    action();
  } catch (const baton::ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return {};
}

baton::Config load(const std::string& text, std::vector<std::string> set = {}) {
  baton::ConfigOverrides overrides;
  overrides.set = std::move(set);
  overrides.use_environment = false;
  return baton::load_config_text(text, "run.yaml", overrides);
}

TEST(Config, EmptyFileGivesEveryDefault) {
  const baton::Config config = load("");
  EXPECT_EQ(config.section("schedule").get_string("name"), "1f1b");
  EXPECT_EQ(config.section("transport").get_string("name"), "gloo");
  EXPECT_EQ(config.section("world").get_int("ranks"), 2);
  EXPECT_EQ(config.section("world").get_string("address"), "127.0.0.1");
  EXPECT_EQ(config.section("validation").at("validators").as_string_list(),
            std::vector<std::string>{"shape_dtype"});
  EXPECT_EQ(config.section("run").at("steps").origin().description, "default");
}

TEST(Config, ReadsValuesWithTheirOrigin) {
  const baton::Config config = load(
      "run:\n"
      "  steps: 7\n"
      "schedule:\n"
      "  name: gpipe\n"
      "  microbatches: 8\n"
      "optimizer: {lr: 0.5}\n"
      "plugins:\n"
      "  path: [/a, /b]\n");
  EXPECT_EQ(config.section("run").get_int("steps"), 7);
  EXPECT_EQ(config.section("run").at("steps").origin().description, "run.yaml:2:10");
  EXPECT_EQ(config.section("schedule").get_string("name"), "gpipe");
  EXPECT_EQ(config.section("schedule").at("microbatches").origin().description, "run.yaml:5:17");
  EXPECT_DOUBLE_EQ(config.section("optimizer").get_float("lr"), 0.5);
  EXPECT_EQ(config.section("plugins").at("path").as_string_list(),
            (std::vector<std::string>{"/a", "/b"}));
}

TEST(Config, TypoInKeyNamesPathLineColumnAndSuggestion) {
  const std::string message = config_error_of([] {
    load(
        "schedule:\n"
        "  name: 1f1b\n"
        "  microbaches: 8\n");
  });
  EXPECT_THAT(message, HasSubstr("run.yaml:3:3: unknown key 'schedule.microbaches'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'microbatches'?"));
  EXPECT_THAT(message,
              HasSubstr("accepts: name, microbatches, stages_per_rank, memory_limit_mb, params"));
}

TEST(Config, UnknownSectionIsAnError) {
  const std::string message = config_error_of([] { load("schedul:\n  name: x\n"); });
  EXPECT_THAT(message, HasSubstr("run.yaml:1:1: unknown section 'schedul'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'schedule'?"));
}

TEST(Config, OverrideOfAnUnknownSectionListsTheSections) {
  std::string message = config_error_of([] { load("", {"train.steps=5"}); });
  EXPECT_THAT(message, HasSubstr("--set train.steps=5: unknown section 'train'"));
  EXPECT_THAT(message,
              HasSubstr("sections: run, world, schedule, transport, validation, plugins, "
                        "model, data, optimizer, lr_schedule, eval, precision, checkpoint, trace"));
  message = config_error_of([] { load("", {"steps=5"}); });
  EXPECT_THAT(message, HasSubstr("'steps' is not section.key (for example run.steps)"));
}

TEST(Config, WrongTypeNamesKeyAndLocation) {
  const std::string message = config_error_of([] { load("schedule:\n  microbatches: eight\n"); });
  EXPECT_THAT(message,
              HasSubstr("run.yaml:2:17: schedule.microbatches: expected int, got 'eight'"));
}

TEST(Config, ListWhereScalarExpected) {
  const std::string message = config_error_of([] { load("run:\n  steps: [1, 2]\n"); });
  EXPECT_THAT(message, HasSubstr("run.steps: expected int, got a list"));
}

TEST(Config, OneWordWhereAListOfStringsIsExpected) {
  EXPECT_EQ(load("plugins:\n  path: /opt/x\n").section("plugins").at("path").as_string_list(),
            std::vector<std::string>{"/opt/x"});
}

TEST(Config, RangeChecksNameTheOrigin) {
  const std::string message = config_error_of([] { load("schedule:\n  microbatches: 0\n"); });
  EXPECT_THAT(message, HasSubstr("run.yaml:2:17: schedule.microbatches must be at least 1, got 0"));
  const std::string rendezvous = config_error_of([] { load("world: {rendezvous: tpc}\n"); });
  EXPECT_THAT(rendezvous, HasSubstr("world.rendezvous must be one of tcp, file"));
  EXPECT_THAT(rendezvous, HasSubstr("did you mean 'tcp'?"));
}

TEST(Config, SyntaxErrorHasLineAndColumn) {
  const std::string message = config_error_of([] { load("run:\n  steps: [1, 2\n"); });
  EXPECT_THAT(message, HasSubstr("run.yaml:"));
  EXPECT_THAT(message, HasSubstr("YAML syntax error"));
}

TEST(Config, SectionMustBeAMapping) {
  const std::string message = config_error_of([] { load("run: 5\n"); });
  EXPECT_THAT(message, HasSubstr("run.yaml:1:6: section 'run' must be a mapping of keys"));
}

TEST(Config, SetOverridesFileValue) {
  const baton::Config config =
      load("schedule:\n  microbatches: 8\n", {"schedule.microbatches=16", "plugins.path=[/x]"});
  EXPECT_EQ(config.section("schedule").get_int("microbatches"), 16);
  EXPECT_EQ(config.section("schedule").at("microbatches").origin().description,
            "--set schedule.microbatches=16");
  EXPECT_EQ(config.section("plugins").at("path").as_string_list(), std::vector<std::string>{"/x"});
}

TEST(Config, SetWithTypoSuggests) {
  const std::string message = config_error_of([] { load("", {"schedule.microbaches=4"}); });
  EXPECT_THAT(message, HasSubstr("unknown key 'schedule.microbaches'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'microbatches'?"));
  EXPECT_THAT(config_error_of([] { load("", {"nonsense"}); }),
              HasSubstr("expected key.path=value"));
}

TEST(Config, EnvironmentOverridesFileAndSetOverridesEnvironment) {
  setenv("BATON_SCHEDULE_MICROBATCHES", "16", 1);
  setenv("BATON_RUN_STEPS", "3", 1);
  baton::ConfigOverrides overrides;
  overrides.set = {"run.steps=5"};
  const baton::Config config =
      baton::load_config_text("schedule:\n  microbatches: 8\n", "run.yaml", overrides);
  unsetenv("BATON_SCHEDULE_MICROBATCHES");
  unsetenv("BATON_RUN_STEPS");
  EXPECT_EQ(config.section("schedule").get_int("microbatches"), 16);
  EXPECT_EQ(config.section("schedule").at("microbatches").origin().description,
            "env BATON_SCHEDULE_MICROBATCHES");
  EXPECT_EQ(config.section("run").get_int("steps"), 5);
}

TEST(Config, UnknownEnvironmentKeyIsAnErrorWithSuggestion) {
  setenv("BATON_SCHEDULE_MICROBACHES", "12", 1);
  const std::string message =
      config_error_of([] { baton::load_config_text("", "run.yaml", baton::ConfigOverrides()); });
  unsetenv("BATON_SCHEDULE_MICROBACHES");
  EXPECT_THAT(message, HasSubstr("env BATON_SCHEDULE_MICROBACHES"));
  EXPECT_THAT(message, HasSubstr("did you mean 'BATON_SCHEDULE_MICROBATCHES'?"));
}

TEST(Config, EnvironmentVariableNames) {
  EXPECT_EQ(baton::environment_variable_for("schedule", "stages_per_rank"),
            "BATON_SCHEDULE_STAGES_PER_RANK");
}

const baton::ParamSpec kTable[] = {
    {"timeout_s", baton::ParamType::kFloat, "60", "Seconds."},
    {"interface", baton::ParamType::kString, "lo", "Network interface."},
    {"token", baton::ParamType::kString, nullptr, "Required."},
    {"sizes", baton::ParamType::kIntList, "[1, 2]", "Sizes."},
};

TEST(Config, PluginParamsAreCheckedAgainstThePluginTable) {
  const baton::Config config = load(
      "transport:\n"
      "  name: gloo\n"
      "  params:\n"
      "    timeout_s: 5\n"
      "    token: abc\n");
  const baton::ParamValues values =
      baton::resolve_params(config.raw_params("transport"), kTable, 4, "transport plugin 'gloo'");
  EXPECT_DOUBLE_EQ(values.get_float("timeout_s"), 5.0);
  EXPECT_EQ(values.at("timeout_s").origin().description, "run.yaml:4:16");
  EXPECT_EQ(values.get_string("interface"), "lo");
  EXPECT_EQ(values.at("interface").origin().description, "default");
  EXPECT_EQ(values.at("sizes").as_int_list(), (std::vector<std::int64_t>{1, 2}));
}

TEST(Config, PluginParamTypoSuggestsFromThePluginTable) {
  const baton::Config config = load("transport:\n  params:\n    timout_s: 5\n    token: x\n");
  const std::string message = config_error_of([&] {
    baton::resolve_params(config.raw_params("transport"), kTable, 4, "transport plugin 'gloo'");
  });
  EXPECT_THAT(message, HasSubstr("run.yaml:3:5: unknown key 'transport.params.timout_s'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'timeout_s'?"));
  EXPECT_THAT(message, HasSubstr("transport plugin 'gloo' accepts: timeout_s, interface, token"));
}

TEST(Config, MissingRequiredPluginParam) {
  const baton::Config config = load("transport:\n  params: {timeout_s: 1}\n");
  const std::string message = config_error_of([&] {
    baton::resolve_params(config.raw_params("transport"), kTable, 4, "transport plugin 'gloo'");
  });
  EXPECT_THAT(message, HasSubstr("transport.params.token is required by transport plugin 'gloo'"));
}

TEST(Config, PluginParamsFromEnvironmentAndSet) {
  setenv("BATON_TRANSPORT_PARAMS_INTERFACE", "eth0", 1);
  baton::ConfigOverrides overrides;
  overrides.set = {"transport.params.token=t"};
  const baton::Config config = baton::load_config_text("", "run.yaml", overrides);
  unsetenv("BATON_TRANSPORT_PARAMS_INTERFACE");
  const baton::ParamValues values =
      baton::resolve_params(config.raw_params("transport"), kTable, 4, "transport plugin 'gloo'");
  EXPECT_EQ(values.get_string("interface"), "eth0");
  EXPECT_EQ(values.at("interface").origin().description, "env BATON_TRANSPORT_PARAMS_INTERFACE");
  EXPECT_EQ(values.get_string("token"), "t");
}

TEST(Config, ParamsOnlyWhereASectionHasAPlugin) {
  const std::string message = config_error_of([] { load("run:\n  params: {a: 1}\n"); });
  EXPECT_THAT(message, HasSubstr("unknown key 'run.params'"));
}

TEST(Config, ResolvedConfigShowsOrigins) {
  const baton::Config config = load("schedule:\n  microbatches: 8\n", {"run.steps=3"});
  const std::string text = baton::format_resolved_config(config);
  EXPECT_THAT(text, HasSubstr("microbatches: 8"));
  EXPECT_THAT(text, HasSubstr("# run.yaml:2:17"));
  EXPECT_THAT(text, HasSubstr("# --set run.steps=3"));
  EXPECT_THAT(text, HasSubstr("validators: [shape_dtype]"));
}

TEST(Config, ResolvedConfigIsLoadableYaml) {
  const baton::Config config = load("run:\n  name: \"my run: 1\"\n");
  const baton::Config again = load(baton::format_resolved_config(config));
  EXPECT_EQ(again.section("run").get_string("name"), "my run: 1");
}

TEST(Config, DefaultsListEveryKeyWithDocAndEnvironmentName) {
  const std::string text = baton::format_config_defaults();
  for (const auto& section : baton::config_sections()) {
    for (const auto& key : section.keys) {
      EXPECT_THAT(text, HasSubstr(std::string(section.name) + "." + key.name + " ("));
      EXPECT_THAT(text, HasSubstr(key.doc));
      EXPECT_THAT(text, HasSubstr(baton::environment_variable_for(section.name, key.name)));
    }
  }
}

TEST(Config, ReadsFilesAndReportsMissingOnes) {
  const std::string path = testing::TempDir() + "/baton_config_test.yaml";
  std::ofstream(path) << "run:\n  steps: 4\n";
  EXPECT_EQ(baton::load_config_file(path).section("run").get_int("steps"), 4);
  EXPECT_THAT(config_error_of([] { baton::load_config_file("/no/such.yaml"); }),
              HasSubstr("cannot read configuration file '/no/such.yaml'"));
}

}  // namespace

namespace {

// docs/configuration.md is the reference users read: every declared key must be in it.
TEST(ConfigDocs, ReferenceDocumentsEveryKey) {
  std::ifstream file(std::string(BATON_SOURCE_DIR) + "/docs/configuration.md");
  ASSERT_TRUE(file.good());
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const auto& section : baton::config_sections()) {
    EXPECT_THAT(text, HasSubstr(std::string("### ") + section.name)) << section.name;
    for (const auto& key : section.keys) {
      const std::string default_text =
          key.default_value[0] ? std::string("`") + key.default_value + "`" : "`\"\"`";
      EXPECT_THAT(text, HasSubstr("| `" + std::string(key.name) + "` |"))
          << section.name << "." << key.name;
      EXPECT_THAT(text, HasSubstr(default_text)) << section.name << "." << key.name;
    }
  }
}

}  // namespace

namespace {

TEST(Config, OneWordWhereAListOfWordsIsExpectedIsAListOfOne) {
  EXPECT_EQ(load("model: {cuts: balanced}").section("model").at("cuts").as_string_list(),
            std::vector<std::string>{"balanced"});
  EXPECT_EQ(load("", {"validation.validators=off"})
                .section("validation")
                .at("validators")
                .as_string_list(),
            std::vector<std::string>{"off"});
  EXPECT_EQ(
      load("world: {ranks: 3}\nmodel: {cuts: [2, 5]}").section("model").at("cuts").as_string_list(),
      (std::vector<std::string>{"2", "5"}));
  EXPECT_EQ(load("").section("model").at("cuts").as_string_list(),
            std::vector<std::string>{"params"});
  EXPECT_EQ(load("").section("run").get_int("threads"), 0);
  EXPECT_EQ(load("").section("model").get_string("loss"), "cross_entropy");
}

}  // namespace

namespace {

TEST(ConfigSections, TheCoreKeepsItsOwnAndAProgramAddsTheRest) {
  std::vector<std::string> names;
  for (const auto& section : baton::config_sections()) names.emplace_back(section.name);
  const std::vector<std::string> expected = {
      "run",  "world",     "schedule",    "transport", "validation", "plugins",    "model",
      "data", "optimizer", "lr_schedule", "eval",      "precision",  "checkpoint", "trace"};
  EXPECT_EQ(names, expected);
  // A section declared twice would make keys ambiguous.
  EXPECT_THAT(baton_test::error_of<baton::Error>([&] {
                baton::add_config_sections({{"model", "again", {}, false}});
              }),
              ::testing::HasSubstr(
                  "configuration section 'model' is declared twice (add_config_sections)"));
  EXPECT_THAT(
      baton_test::error_of<baton::Error>([&] {
        baton::add_config_sections({{"run", "again", {}, false}});
      }),
      ::testing::HasSubstr("configuration section 'run' is declared twice (add_config_sections)"));
  baton_app::add_app_config_sections();  // a second call changes nothing
  EXPECT_EQ(baton::config_sections().size(), expected.size());
}

// Each value the issue found passing `config check` and failing later (or silently), refused
// now by the configuration itself, naming the key, where the value came from and the rule.
TEST(ConfigChecks, ValuesThatFailedOnlyAtLaunchAreRefusedWhenRead) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"world.timeout_s=-5", "world.timeout_s must be a number of seconds above 0"},
      {"world.timeout_s=nan", "world.timeout_s must be a number of seconds above 0"},
      {"optimizer.lr=nan", "optimizer.lr must be a finite number above 0, got nan"},
      {"optimizer.name=lbfgs", "optimizer.name must be one of sgd, adam, adamw, got 'lbfgs'"},
      {"data.source=nosuch", "data.source must be one of synthetic, files, text, got 'nosuch'"},
      {"model.cuts=[-1]", "must be increasing and at least 1; -1 is not"},
      {"model.cuts=[3, 2]", "must be increasing and at least 1; 2 is not"},
      {"model.cuts=[2, 5]",
       "has 2 cuts; 2 stages (world.ranks / world.data_parallel x schedule.stages_per_rank) need "
       "1"},
      {"model.cuts=[balnced]", "did you mean 'balanced'?"},
      {"data.batch_size=4", "data.batch_size 4 does not split into schedule.microbatches 8"},
      {"checkpoint.every=-1", "checkpoint.every must be at least 0"},
      {"trace.steps=-1", "trace.steps must be at least 0"},
      {"schedule.microbatches=1000000000", "schedule.microbatches must be at most 65536"},
      {"world.ranks=1000000", "world.ranks must be at most 16384"},
      {"schedule.stages_per_rank=1000", "schedule.stages_per_rank must be at most 64"},
      {"run.name=../escaped", "run.name '../escaped' must be a plain folder name"},
      {"model.loss=hinge", "model.loss must be one of cross_entropy, mse"},
  };
  for (const auto& [assignment, expected] : cases) {
    const std::string message =
        config_error_of([&] { load("schedule: {microbatches: 8}\n", {assignment}); });
    EXPECT_THAT(message, HasSubstr(expected)) << assignment;
    EXPECT_THAT(message, HasSubstr("--set " + assignment)) << assignment << ": origin missing";
  }
}

// world.data_parallel: the ranks must split into equal pipelines, the batch into the replicas'
// microbatches, and the transport must be able to all-reduce (checked with the plugins).
TEST(ConfigChecks, DataParallelLayoutsThatCannotWorkAreRefused) {
  std::string message =
      config_error_of([] { load("world: {ranks: 4}\n", {"world.data_parallel=3"}); });
  EXPECT_THAT(message, HasSubstr("--set world.data_parallel=3: world.data_parallel is 3 but "
                                 "world.ranks is 4, which does not split into 3 pipelines"));
  EXPECT_THAT(message, HasSubstr("set world.ranks to a multiple of 3"));
  message = config_error_of([] {
    load("world: {ranks: 4, data_parallel: 2}\ndata: {batch_size: 12}\n",
         {"schedule.microbatches=4"});
  });
  EXPECT_THAT(message, HasSubstr("data.batch_size 12 does not split into 2 replicas "
                                 "(world.data_parallel) x 4 microbatches"));
  EXPECT_THAT(message, HasSubstr("a multiple of 8"));
  EXPECT_THAT(config_error_of([] { load("", {"world.data_parallel=0"}); }),
              HasSubstr("world.data_parallel must be at least 1"));
  // Four ranks as two pipelines of two, with a batch that splits: accepted.
  EXPECT_NO_THROW(load("world: {ranks: 4, data_parallel: 2}\ndata: {batch_size: 16}\n",
                       {"schedule.microbatches=4"}));
}

TEST(ConfigChecks, APlanTooLargeToHoldIsRefusedNamingTheProduct) {
  const std::string message = config_error_of([] {
    load("", {"world.ranks=1024", "schedule.stages_per_rank=64", "schedule.microbatches=1024"});
  });
  EXPECT_THAT(message, HasSubstr("world.ranks x schedule.stages_per_rank x schedule.microbatches "
                                 "is 67108864, at most 1048576"));
}

// Hostile YAML: refused quickly, with the file and line, never gigabytes of memory or a
// stack overflow in the parser.
TEST(ConfigChecks, HostileYamlIsRefusedBeforeItCostsMemoryOrStack) {
  std::string aliases = "plugins:\n  path: [&s " + std::string(1024, 'x');
  for (int i = 0; i < 2000; ++i) aliases += ", *s";
  aliases += "]\n";
  EXPECT_THAT(config_error_of([&] { load(aliases); }),
              HasSubstr("run.yaml:2:9: plugins.path: the list holds more than 65536 bytes in all"));
  const std::string long_value = "run:\n  name: " + std::string(100000, 'n') + "\n";
  EXPECT_THAT(config_error_of([&] { load(long_value); }),
              HasSubstr("run.yaml:2:9: run.name: a value of 100000 bytes"));
  const std::string deep = "run:\n  name: " + std::string(100000, '[') + "\n";
  EXPECT_THAT(config_error_of([&] { load(deep); }),
              HasSubstr("run.yaml:2: brackets nested more than 32 deep"));
  const std::string huge(2 << 20, '#');
  EXPECT_THAT(config_error_of([&] { load(huge); }),
              HasSubstr("run.yaml: 2097152 bytes; a configuration is at most 1048576 bytes"));
  // Nested aliases, in lists and in mappings (issue 48: 386 bytes, 10^10 visits): refused by
  // the walk's node budget at once, whatever the pattern.
  for (const bool mappings : {false, true}) {
    std::string nested = "run:\n  x: &a0 [n, n, n, n, n, n, n, n, n, n]\n";
    for (int level = 1; level <= 10; ++level) {
      nested +=
          "  y" + std::to_string(level) + ": &a" + std::to_string(level) + (mappings ? " {" : " [");
      for (int i = 0; i < 10; ++i) {
        nested += (i ? ", " : "") + (mappings ? "k" + std::to_string(i) + ": " : std::string()) +
                  "*a" + std::to_string(level - 1);
      }
      nested += mappings ? "}\n" : "]\n";
    }
    EXPECT_THAT(config_error_of([&] { load(nested); }),
                HasSubstr("expands to more than 1000000 values once its aliases"))
        << nested;
  }
  // An alias inside its own anchor is a cycle (found by fuzz_config_yaml: a stack overflow):
  // refused by the walk's depth bound, in lists and in mappings.
  for (const std::string cycle : {"run:\n  x: &a [*a]\n", "run:\n  x: &a {k: *a}\n"}) {
    EXPECT_THAT(config_error_of([&] { load(cycle); }),
                HasSubstr("nested more than 64 deep once aliases (*name) are followed"))
        << cycle;
  }
  std::string many = "plugins:\n  path: [";
  for (int i = 0; i < 5000; ++i) many += (i ? ", p" : "p");
  many += "]\n";
  EXPECT_THAT(config_error_of([&] { load(many); }),
              HasSubstr("plugins.path: a list of 5000 items; lists hold at most 4096"));
}

}  // namespace
