// Loading a plugin in a test. Only two things may turn a test into a skip: the plugin's .so
// was not built (its package was missing at configure time), or it needs hardware this
// machine lacks (a GPU for nccl). A plugin file that is there but fails to load, or a
// CPU transport that says it cannot run, fails the test with the loader's report, so a
// regression in how plugins are built or found can never pass as "skipped".
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "baton/error.h"
#include "baton/plugin_loader.h"

namespace baton_test {

struct PluginForTest {
  std::shared_ptr<baton::LoadedPlugin> plugin;
  std::string skip;     // why the test cannot run on this machine
  std::string failure;  // why the test fails: the plugin is there but unusable
};

// Plugins that need hardware a CPU-only machine does not have.
inline bool needs_hardware(const std::string& name) {
  return name == "nccl";
}

// `name` is a plugin's name, or the path of its file (a plugin under test by path: a file that
// is not there fails, it is never skipped).
inline PluginForTest plugin_for_test(baton::PluginKind kind, const std::string& name) {
  PluginForTest result;
  const baton::PluginLoader loader;
  if (name.find('/') != std::string::npos) {
    try {
      result.plugin = loader.load(kind, name);
    } catch (const baton::PluginError& error) {
      result.failure = error.what();
      return result;
    }
    const baton::Viability viability = result.plugin->viability();
    if (!viability.viable) {
      result.failure = "plugin '" + name + "' cannot run on this machine: " + viability.reason;
    }
    return result;
  }
  const std::string file = baton::plugin_file_name(kind, name);
  bool built = false;
  std::string searched;
  for (const std::string& dir : loader.search_dirs()) {
    built = built || std::filesystem::exists(dir + "/" + file);
    searched += (searched.empty() ? "" : ", ") + dir;
  }
  if (!built) {
    result.skip = file + " was not built (searched " + searched + ")";
    return result;
  }
  try {
    result.plugin = loader.load(kind, name);
  } catch (const baton::PluginError& error) {
    result.failure = file + " is built but does not load: " + error.what();
    return result;
  }
  const baton::Viability viability = result.plugin->viability();
  if (!viability.viable) {
    (needs_hardware(name) ? result.skip : result.failure) =
        "plugin '" + name + "' cannot run on this machine: " + viability.reason;
  }
  return result;
}

}  // namespace baton_test

// In a test body or SetUp(): fails on a broken plugin, skips on a missing one.
#define BATON_REQUIRE_PLUGIN(result, kind, name)                                        \
  const ::baton_test::PluginForTest result = ::baton_test::plugin_for_test(kind, name); \
  if (!result.failure.empty()) FAIL() << result.failure;                                \
  if (!result.skip.empty()) GTEST_SKIP() << result.skip
