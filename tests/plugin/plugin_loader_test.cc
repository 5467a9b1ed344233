// The plugin loader against real shared libraries built by the test suite: one good
// plugin and one for each way a plugin must be refused.
#include <dlfcn.h>
#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/version.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/plugin_loader.h"
#include "baton/schedule.h"
#include "plugin_for_test.h"
#include "run_command.h"

namespace {

using baton::PluginError;
using baton::PluginKind;
using testing::ElementsAre;
using testing::ElementsAreArray;
using testing::HasSubstr;

const std::string kDir = BATON_TEST_PLUGIN_DIR;

std::string path_of(PluginKind kind, const std::string& name) {
  return kDir + "/" + baton::plugin_file_name(kind, name);
}

// The message of the PluginError `action` throws; fails the test when it throws nothing.
template <typename Action>
std::string error_of(Action action) {
  try {
    action();
  } catch (const PluginError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a PluginError";
  return {};
}

baton::ParamValues params_with_label() {
  baton::RawParams raw;
  raw.key_path = "schedule.params";
  baton::RawValue label;
  label.scalar = "hello";
  raw.entries.emplace_back("label", label);
  const auto& table =
      baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-good"), nullptr)->descriptor();
  return baton::resolve_params(raw, table.params, table.num_params, "test");
}

TEST(PluginLoader, LoadsByNameFromConfigPathAndCreatesTheInterface) {
  baton::PluginLoader loader({kDir});
  auto plugin = loader.load(PluginKind::kSchedule, "test-good");
  EXPECT_EQ(plugin->name(), "test-good");
  EXPECT_EQ(std::string(plugin->descriptor().version), "1.2.3");
  EXPECT_EQ(plugin->path(), path_of(PluginKind::kSchedule, "test-good"));
  EXPECT_TRUE(plugin->viability().viable);
  auto schedule = plugin->create_as<baton::Schedule>(params_with_label());
  const baton::Plan plan = schedule->build({2, 1, 3});
  EXPECT_EQ(plan.schedule_name, "test-good(depth=2)");
  ASSERT_EQ(plan.rank_steps.size(), 2u);
  EXPECT_EQ(plan.rank_steps[0].size(), 6u);  // 3 forwards + 3 backwards of stage 0
}

// An object a plugin made holds its library loaded, whatever the caller drops first: the
// object's destructor and vtable live in that library.
TEST(PluginLoader, AnObjectKeepsItsPluginsLibraryLoadedUntilItIsGone) {
  const std::string path = path_of(PluginKind::kSchedule, "test-good");
  const auto loaded_now = [&] {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (handle != nullptr) dlclose(handle);
    return handle != nullptr;
  };
  std::shared_ptr<baton::LoadedPlugin> plugin = baton::load_plugin_file(path, nullptr);
  const std::weak_ptr<baton::LoadedPlugin> watched = plugin;
  baton::PluginPtr<baton::Schedule> schedule =
      plugin->create_as<baton::Schedule>(params_with_label());
  std::shared_ptr<baton::Schedule> shared = plugin->create_as<baton::Schedule>(params_with_label());
  plugin.reset();
  EXPECT_FALSE(watched.expired());
  EXPECT_TRUE(loaded_now());
  EXPECT_EQ(schedule->build({2, 1, 3}).schedule_name, "test-good(depth=2)");
  schedule.reset();
  EXPECT_FALSE(watched.expired()) << "the shared copy still holds the library";
  EXPECT_EQ(shared->build({2, 1, 3}).schedule_name, "test-good(depth=2)");
  shared.reset();
  EXPECT_TRUE(watched.expired());
  EXPECT_FALSE(loaded_now()) << path << " stayed loaded after its last object was deleted";
}

TEST(PluginLoader, LoadsByPath) {
  auto plugin = baton::PluginLoader().load(PluginKind::kSchedule,
                                           path_of(PluginKind::kSchedule, "test-good"));
  EXPECT_EQ(plugin->name(), "test-good");
}

TEST(PluginLoader, FindsPluginsThroughEnvironmentPath) {
  setenv("BATON_PLUGIN_PATH", ("/nonexistent/first:" + kDir).c_str(), 1);
  baton::PluginLoader loader;
  unsetenv("BATON_PLUGIN_PATH");
  ASSERT_GE(loader.search_dirs().size(), 2u);
  EXPECT_EQ(loader.search_dirs()[0], "/nonexistent/first");
  EXPECT_EQ(loader.search_dirs()[1], kDir);
  EXPECT_EQ(loader.load(PluginKind::kSchedule, "test-good")->name(), "test-good");
}

TEST(PluginLoader, ConfigPathsComeBeforeEnvironmentPath) {
  setenv("BATON_PLUGIN_PATH", "/from/env", 1);
  baton::PluginLoader loader({"/from/yaml"});
  unsetenv("BATON_PLUGIN_PATH");
  ASSERT_GE(loader.search_dirs().size(), 2u);
  EXPECT_EQ(loader.search_dirs()[0], "/from/yaml");
  EXPECT_EQ(loader.search_dirs()[1], "/from/env");
}

TEST(PluginLoader, MissingPluginListsEveryPathTriedAndWhatWasFound) {
  baton::PluginLoader loader({kDir, "/nonexistent/plugins"});
  const std::string message = error_of([&] { loader.load(PluginKind::kSchedule, "test-goood"); });
  EXPECT_THAT(message, HasSubstr("cannot load schedule plugin 'test-goood'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'test-good'"));
  EXPECT_THAT(message, HasSubstr(kDir + "/libbaton-schedule-test-goood.so (missing)"));
  EXPECT_THAT(message, HasSubstr("/nonexistent/plugins/libbaton-schedule-test-goood.so (missing)"));
  EXPECT_THAT(message, HasSubstr("schedule plugins found:"));
  EXPECT_THAT(message, HasSubstr("test-good (" + path_of(PluginKind::kSchedule, "test-good")));
  // Other kinds are not offered as schedules.
  EXPECT_THAT(message, testing::Not(HasSubstr("test-other-good (")));
}

TEST(PluginLoader, MissingFileByPath) {
  const std::string message =
      error_of([] { baton::PluginLoader().load(PluginKind::kSchedule, "/no/such/libx.so"); });
  EXPECT_THAT(message, HasSubstr("/no/such/libx.so: no such file"));
}

TEST(PluginLoader, RefusesLibraryWithoutEntryPoint) {
  // Refused from the file itself: none of the library's code runs, not even its static
  // constructors (a configuration may name any file as a plugin).
  const std::string marker = testing::TempDir() + "/constructor-ran";
  std::remove(marker.c_str());
  setenv("BATON_TEST_CONSTRUCTOR_MARKER", marker.c_str(), 1);
  const std::string message = error_of(
      [] { baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-no-entry"), nullptr); });
  unsetenv("BATON_TEST_CONSTRUCTOR_MARKER");
  EXPECT_THAT(message, HasSubstr("not a baton plugin"));
  EXPECT_THAT(message, HasSubstr("baton_plugin_info"));
  EXPECT_THAT(message, HasSubstr("it was not loaded"));
  EXPECT_THAT(message, HasSubstr("BATON_PLUGIN(...)"));
  EXPECT_FALSE(std::ifstream(marker).good()) << "the library's static constructor ran";
}

TEST(PluginLoader, RefusesWrongAbiMajorNamingBothVersions) {
  const std::string message = error_of(
      [] { baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-abi-major"), nullptr); });
  EXPECT_THAT(message,
              HasSubstr("built for baton ABI " + std::to_string(BATON_ABI_MAJOR + 1) + "."));
  EXPECT_THAT(message, HasSubstr("this baton is ABI " + std::to_string(BATON_ABI_MAJOR) + "."));
}

TEST(PluginLoader, RefusesANewerAbiMinorNamingBothVersions) {
  const std::string message = error_of(
      [] { baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-abi-minor"), nullptr); });
  const std::string core = std::to_string(BATON_ABI_MAJOR) + "." + std::to_string(BATON_ABI_MINOR);
  EXPECT_THAT(message, HasSubstr("built for baton ABI " + std::to_string(BATON_ABI_MAJOR) + "." +
                                 std::to_string(BATON_ABI_MINOR + 1) +
                                 ", newer than this baton's ABI " + core));
  EXPECT_THAT(message, HasSubstr("upgrade baton, or rebuild the plugin"));
}

std::vector<std::string> interfaces_of(const baton::PluginDescriptor& descriptor) {
  std::vector<std::string> listed;
  for (const baton::PluginInterface& interface : baton::plugin_interfaces(descriptor)) {
    listed.push_back(std::string(interface.name) + " " + std::to_string(interface.version));
  }
  return listed;
}

// ABI 1.1 appended `capabilities`: a descriptor that ends before it (as 1.0's did) loads with
// its kind's interface only (the loader does not read past its descriptor; the bits behind
// it here are garbage on purpose), while a shorter one is refused.
TEST(PluginLoader, LoadsADescriptorThatEndsBeforeCapabilities) {
  const auto plugin =
      baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-abi-1-0"), nullptr);
  EXPECT_THAT(interfaces_of(plugin->descriptor()), ElementsAre("baton.schedule 1"));
}

// ABI 2.1 appended the interface list: a 2.0 descriptor (the fields behind it garbage on
// purpose) loads with the transport interface's first version and what its bits said.
TEST(PluginLoader, ReadsAnAbi20DescriptorsCapabilitiesAsInterfaces) {
  const auto plugin =
      baton::load_plugin_file(path_of(PluginKind::kTransport, "test-abi-2-0"), nullptr);
  EXPECT_THAT(interfaces_of(plugin->descriptor()),
              ElementsAre("baton.transport 1", "baton.all_reduce 1"));
  EXPECT_EQ(baton::interface_version(plugin->descriptor(), "baton.receives_match_by_tag"), 0u);
}

// ABI 2.0's plugin_capabilities() is still in the runtime: a 2.0 plugin that calls it loads
// and gets the bits of what the descriptor declares, from a 2.1 list too.
TEST(PluginLoader, KeepsAbi20sCapabilityQueryForThePluginsThatCallIt) {
  const std::string path = path_of(PluginKind::kTransport, "test-abi-2-0");
  const auto plugin = baton::load_plugin_file(path, nullptr);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  using Query = std::uint32_t (*)(const baton::PluginDescriptor&);
  const auto query = reinterpret_cast<Query>(::dlsym(handle, "test_abi_2_0_capabilities"));
  ASSERT_NE(query, nullptr) << ::dlerror();
  EXPECT_EQ(query(plugin->descriptor()), std::uint32_t{baton::kCapabilityAllReduce});
  const baton_test::PluginForTest gloo =
      baton_test::plugin_for_test(PluginKind::kTransport, "gloo");
  if (gloo.plugin != nullptr) {
    EXPECT_EQ(query(gloo.plugin->descriptor()),
              std::uint32_t{baton::kCapabilityAllReduce | baton::kCapabilityReceivesMatchByTag});
  }
  ::dlclose(handle);
}

TEST(PluginLoader, RefusesAnInterfaceListItCannotSearch) {
  const std::map<std::string, std::string> refusals = {
      {"test-interfaces-1", "lists interface 'baton.schedule' twice"},
      {"test-interfaces-2", "interface 1 of its list has no name or version 0"},
      {"test-interfaces-3", "does not list its kind's interface 'baton.schedule'"}};
  for (const auto& [name, expected] : refusals) {
    EXPECT_THAT(
        error_of([&] { baton::load_plugin_file(path_of(PluginKind::kSchedule, name), nullptr); }),
        HasSubstr(expected))
        << name;
  }
}

TEST(PluginLoader, RefusesADescriptorShorterThanAbi10) {
  const std::string message = error_of([] {
    baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-short-descriptor"), nullptr);
  });
  EXPECT_THAT(message, HasSubstr("descriptor is "));
  EXPECT_THAT(message, HasSubstr("needs at least"));
}

TEST(PluginLoader, BuiltInTransportsListTheInterfacesTheyImplement) {
  const std::map<std::string, std::vector<std::string>> expected = {
      {"gloo",
       {"baton.transport 2", "baton.all_reduce 1", "baton.shard_collectives 1",
        "baton.receives_match_by_tag 1"}},
      {"ucx",
       {"baton.transport 2", "baton.all_reduce 1", "baton.shard_collectives 1",
        "baton.receives_match_by_tag 1"}},
      // NCCL matches transfers in posting order: not by tag.
      {"nccl", {"baton.transport 2", "baton.all_reduce 1", "baton.shard_collectives 1"}}};
  for (const auto& [name, interfaces] : expected) {
    // Only the descriptor is read: nccl's lists them without a GPU.
    const baton_test::PluginForTest found =
        baton_test::plugin_for_test(PluginKind::kTransport, name);
    if (!found.failure.empty() && found.plugin == nullptr) ADD_FAILURE() << found.failure;
    if (found.plugin == nullptr) continue;  // not built here
    EXPECT_THAT(interfaces_of(found.plugin->descriptor()), ElementsAreArray(interfaces)) << name;
  }
  EXPECT_THAT(
      interfaces_of(baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-good"), nullptr)
                        ->descriptor()),
      ElementsAre("baton.schedule 1"));
}

// world.data_parallel needs a transport that lists baton.all_reduce; the refusal names
// the key, where it was set, the transport and what to do.
TEST(PluginLoader, DataParallelRefusesATransportThatCannotAllReduce) {
  baton::ConfigOverrides overrides;
  overrides.set = {"world.ranks=4", "world.data_parallel=2",
                   "transport.name=" + path_of(PluginKind::kTransport, "test-other-good")};
  baton::Config config = baton::load_config_text("", "test", overrides);
  std::string message = "no error";
  try {
    baton::resolve_plugins(config, baton::plugin_loader_for(config));
  } catch (const baton::ConfigError& error) {
    message = error.what();
  }
  EXPECT_THAT(message, HasSubstr("--set world.data_parallel=2: world.data_parallel is 2, but "
                                 "transport 'test-other-good' cannot all-reduce"));
  EXPECT_THAT(message, HasSubstr("or world.data_parallel: 1"));
}

TEST(PluginLoader, RefusesWrongKind) {
  const PluginKind wanted = PluginKind::kSchedule;
  const std::string message = error_of([&] {
    baton::load_plugin_file(path_of(PluginKind::kTransport, "test-other-good"), &wanted);
  });
  EXPECT_THAT(message,
              HasSubstr("'test-other-good' is a transport plugin, expected a schedule plugin"));
}

TEST(PluginLoader, RefusesATransportBuiltAgainstAnotherLibTorch) {
  const std::string message = error_of([] {
    baton::load_plugin_file(path_of(PluginKind::kTransport, "test-torch-version"), nullptr);
  });
  EXPECT_THAT(message, HasSubstr("built against LibTorch 0.4.1"));
  EXPECT_THAT(message, HasSubstr(std::string("this baton uses LibTorch ") + TORCH_VERSION));
}

TEST(PluginLoader, RefusesATransportBuiltWithoutLibTorch) {
  const std::string message = error_of(
      [] { baton::load_plugin_file(path_of(PluginKind::kTransport, "test-no-torch"), nullptr); });
  EXPECT_THAT(message, HasSubstr("was built against no LibTorch, this baton uses LibTorch"));
}

TEST(PluginLoader, LoadsAScheduleBuiltWithoutLibTorch) {
  // test-good links only the plan layer: it records no LibTorch version and needs none.
  const auto plugin = baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-good"), nullptr);
  EXPECT_EQ(plugin->descriptor().torch_version, nullptr);
  const auto needed =
      baton_test::run_command("readelf -d '" + path_of(PluginKind::kSchedule, "test-good") + "'");
  EXPECT_THAT(needed.output, HasSubstr("libbaton_plan.so"));
  EXPECT_THAT(needed.output, testing::Not(testing::ContainsRegex("torch|c10|baton_core")))
      << needed.output;
}

TEST(PluginLoader, RefusesOtherCxxAbi) {
  const std::string message = error_of(
      [] { baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-cxx-abi"), nullptr); });
  EXPECT_THAT(message,
              HasSubstr("_GLIBCXX_USE_CXX11_ABI=" + std::to_string(BATON_CXX11_ABI == 1 ? 0 : 1)));
  EXPECT_THAT(message, HasSubstr("this baton with " + std::to_string(BATON_CXX11_ABI)));
}

TEST(PluginLoader, ReportsDlerrorForUnresolvedSymbols) {
  const std::string message = error_of(
      [] { baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-unresolved"), nullptr); });
  EXPECT_THAT(message, HasSubstr("failed to load"));
  EXPECT_THAT(message, HasSubstr("baton_test_symbol_that_does_not_exist"));
}

TEST(PluginLoader, ReportsNonLibraryFile) {
  const std::string path = testing::TempDir() + "/libbaton-schedule-text.so";
  std::ofstream(path) << "not an ELF file\n";
  const std::string message = error_of([&] { baton::load_plugin_file(path, nullptr); });
  EXPECT_THAT(message, HasSubstr(path + ": not loaded: baton cannot read its table"));
}

// A library whose section headers are gone still loads (dlopen reads program headers), but
// its exports cannot be read from the file: refused unloaded, its constructor never run.
TEST(PluginLoader, RefusesALibraryWhoseExportsCannotBeReadWithoutRunningIt) {
  const std::string copy = testing::TempDir() + "/libbaton-schedule-headless.so";
  std::filesystem::copy_file(path_of(PluginKind::kSchedule, "test-no-entry"), copy,
                             std::filesystem::copy_options::overwrite_existing);
  {
    std::fstream file(copy, std::ios::in | std::ios::out | std::ios::binary);
    Elf64_Ehdr header;
    file.read(reinterpret_cast<char*>(&header), sizeof header);
    header.e_shoff = 0;
    header.e_shnum = 0;
    header.e_shstrndx = 0;
    file.seekp(0);
    file.write(reinterpret_cast<const char*>(&header), sizeof header);
  }
  const std::string marker = testing::TempDir() + "/headless-constructor-ran";
  std::remove(marker.c_str());
  setenv("BATON_TEST_CONSTRUCTOR_MARKER", marker.c_str(), 1);
  const std::string message = error_of([&] { baton::load_plugin_file(copy, nullptr); });
  unsetenv("BATON_TEST_CONSTRUCTOR_MARKER");
  EXPECT_THAT(message, HasSubstr(copy + ": not loaded: baton cannot read its table"));
  EXPECT_FALSE(std::ifstream(marker).good()) << "the library's static constructor ran";
}

TEST(PluginLoader, WrapsThrowingFactory) {
  auto plugin = baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-throwing"), nullptr);
  const std::string message = error_of([&] { plugin->create(baton::ParamValues()); });
  EXPECT_THAT(message, HasSubstr("schedule plugin 'test-throwing'"));
  EXPECT_THAT(message, HasSubstr("failed to start: cannot open device /dev/imaginary0"));
}

TEST(PluginLoader, APluginInTwoFilesCreatesFromItsImplementationLibrary) {
  auto plugin = baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-two-files"), nullptr);
  const auto schedule = plugin->create_as<baton::Schedule>(baton::ParamValues());
  EXPECT_EQ(schedule->build({2, 1, 2}).schedule_name, "built by the implementation library");
}

TEST(PluginLoader, APluginWhoseImplementationIsMissingNamesTheFile) {
  auto plugin =
      baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-lost-implementation"), nullptr);
  const std::string message = error_of([&] { plugin->create(baton::ParamValues()); });
  EXPECT_THAT(message, HasSubstr("schedule plugin 'test-lost-implementation'"));
  EXPECT_THAT(message, HasSubstr(kDir + "/libbaton_nowhere_schedule.so: the plugin's "
                                        "implementation failed to load"));
  EXPECT_THAT(message, HasSubstr("reinstall the plugin"));
}

// The implementation library is a second file: it carries a stamp of what it was built for,
// checked as the descriptor is, before its factory (which aborts here) can run.
TEST(PluginLoader, RefusesAnImplementationBuiltForANewerAbi) {
  auto plugin =
      baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-stale-ahead"), nullptr);
  const std::string message = error_of([&] { plugin->create(baton::ParamValues()); });
  EXPECT_THAT(message,
              HasSubstr(kDir +
                        "/libbaton_test-stale-ahead_schedule.so: the plugin's "
                        "implementation was built for baton ABI " +
                        std::to_string(BATON_ABI_MAJOR) + "." +
                        std::to_string(BATON_ABI_MINOR + 1) + ", this baton is ABI " +
                        std::to_string(BATON_ABI_MAJOR) + "." + std::to_string(BATON_ABI_MINOR)));
  EXPECT_THAT(message, HasSubstr("rebuild the plugin (both its files)"));
}

TEST(PluginLoader, RefusesAnImplementationWithoutAStamp) {
  auto plugin =
      baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-stale-unstamped"), nullptr);
  const std::string message = error_of([&] { plugin->create(baton::ParamValues()); });
  EXPECT_THAT(message, HasSubstr("libbaton_test-stale-unstamped_schedule.so: the plugin's "
                                 "implementation carries no version stamp"));
}

TEST(PluginLoader, RefusesObjectOfWrongInterface) {
  auto plugin =
      baton::load_plugin_file(path_of(PluginKind::kSchedule, "test-wrong-interface"), nullptr);
  const std::string message =
      error_of([&] { plugin->create_as<baton::Schedule>(baton::ParamValues()); });
  EXPECT_THAT(message, HasSubstr("does not implement the schedule interface"));
}

TEST(PluginLoader, RefusesFileWhoseDescriptorHasAnotherName) {
  baton::PluginLoader loader({kDir});
  const std::string message =
      error_of([&] { loader.load(PluginKind::kSchedule, "test-misnamed"); });
  EXPECT_THAT(message, HasSubstr("declares the name 'somebody-else', expected 'test-misnamed'"));
}

TEST(PluginLoader, RefusalInSearchIsReportedWithTheReason) {
  baton::PluginLoader loader({kDir});
  const std::string message =
      error_of([&] { loader.load(PluginKind::kSchedule, "test-abi-major"); });
  EXPECT_THAT(message, HasSubstr("libbaton-schedule-test-abi-major.so (failed: "));
  EXPECT_THAT(message, HasSubstr("built for baton ABI"));
}

TEST(PluginLoader, DiscoverListsLoadedAndRefusedPlugins) {
  baton::PluginLoader loader({kDir});
  bool saw_good = false, saw_transport = false, saw_refused_abi = false, saw_misnamed = false;
  for (const auto& listing : loader.discover()) {
    if (listing.path == path_of(PluginKind::kSchedule, "test-good")) {
      saw_good = listing.loaded && listing.plugin->kind() == PluginKind::kSchedule;
    }
    if (listing.path == path_of(PluginKind::kTransport, "test-other-good")) {
      saw_transport = listing.loaded && !listing.plugin->viability().viable &&
                      listing.plugin->viability().reason == "test hardware is absent";
    }
    if (listing.path == path_of(PluginKind::kSchedule, "test-abi-major")) {
      saw_refused_abi = !listing.loaded && listing.error.find("ABI") != std::string::npos;
    }
    if (listing.path == path_of(PluginKind::kSchedule, "test-misnamed")) {
      saw_misnamed = !listing.loaded &&
                     listing.error.find("should be named libbaton-schedule-somebody-else.so") !=
                         std::string::npos;
    }
  }
  EXPECT_TRUE(saw_misnamed);
  EXPECT_TRUE(saw_good);
  EXPECT_TRUE(saw_transport);
  EXPECT_TRUE(saw_refused_abi);
}

}  // namespace
