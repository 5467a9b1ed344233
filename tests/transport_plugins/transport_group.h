// Several ranks of one transport plugin inside one process, connected through a FileStore
// in a fresh temporary folder. For tests and benchmarks that need connected peers but not
// separate processes (a peer that dies needs real processes: see tests/transport).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/params.h"
#include "baton/plugin_loader.h"
#include "baton/transport.h"

namespace baton_test {

struct TransportGroup {
  std::shared_ptr<baton::LoadedPlugin> plugin;
  std::vector<baton::PluginPtr<baton::Transport>> ranks;
  std::string folder;

  // Destroys the transports (all at once: a transport's teardown may wait for its peers),
  // then the plugin, then removes the folder.
  ~TransportGroup();
  baton::Transport& operator[](int rank) { return *ranks.at(static_cast<std::size_t>(rank)); }
};

// The plugin's parameters: its defaults, with `overrides` (key → YAML scalar) applied.
baton::ParamValues plugin_params(const baton::LoadedPlugin& plugin,
                                 const std::map<std::string, std::string>& overrides = {});

// Loads `plugin_name` through the real loader, creates `world_size` transports and connects
// them concurrently, each with `timeout`. Throws what loading, creating or connecting throws.
std::unique_ptr<TransportGroup> connect_group(
    const std::string& plugin_name, int world_size,
    const std::map<std::string, std::string>& params = {},
    std::chrono::milliseconds timeout = std::chrono::milliseconds(20000));

// Sets (or, with nullopt, unsets) an environment variable until the end of the scope.
class ScopedEnvironment {
 public:
  ScopedEnvironment(std::string name, const std::optional<std::string>& value);
  ~ScopedEnvironment();
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

}  // namespace baton_test
