// A transport that lists version 2 of the transport interface is asked, before it connects,
// whether it moves tensors on the rank's device (world.device), and a no refuses the run with
// the transport's own reason. The real gloo plugin, asked about a device it cannot move.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "baton/config.h"
#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/stores.h"
#include "training/config_sections.h"
#include "training/rank_connections.h"

namespace {

using testing::HasSubstr;

TEST(ConnectTransport, RefusesADeviceTheTransportCannotMoveBeforeItConnects) {
  baton_app::add_app_config_sections();
  baton::ConfigOverrides overrides;
  overrides.use_environment = false;
  overrides.set = {"world.ranks=2", "transport.name=gloo"};
  baton::Config config = baton::load_config_text("", "test.yaml", overrides);
  const baton::ConfiguredPlugins plugins =
      baton::resolve_plugins(config, baton::plugin_loader_for(config));
  baton_app::WorldInfo world;
  world.rank = 0;
  world.world_size = 2;
  const std::string folder =
      (std::filesystem::temp_directory_path() / ("baton-device-" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(folder);
  auto store = std::make_shared<baton::FileStore>(folder);
  std::string message = "no error";
  try {
    // No peer ever comes: a transport that tried to connect would wait for it, and fail
    // naming the missing peer instead.
    baton_app::ConnectionSettings settings;
    settings.transport_params = config.plugin_params("transport");
    baton_app::connect_transport(settings, plugins, world, store, std::chrono::seconds(60),
                                 c10::Device(c10::kMeta));
  } catch (const baton::PluginError& error) {
    message = error.what();
  }
  std::filesystem::remove_all(folder);
  EXPECT_THAT(message, HasSubstr("transport 'gloo' cannot move this rank's tensors, which live "
                                 "on meta (world.device: meta): gloo moves CPU tensors only"));
}

}  // namespace
