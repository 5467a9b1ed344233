// gloo-specific behaviour that the conformance suite does not cover: its parameter table,
// refusing an unusable interface, use before connect(), and its limit on operations in
// flight per tag.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>

#include "baton/config.h"
#include "baton/plugin_loader.h"
#include "baton/stores.h"
#include "baton/transport.h"
#include "plugin_for_test.h"
#include "rank_launcher.h"

namespace baton {
namespace {

class GlooPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    BATON_REQUIRE_PLUGIN(gloo, PluginKind::kTransport, "gloo");
    plugin_ = gloo.plugin;
  }

  ParamValues params(std::vector<std::pair<std::string, std::string>> values = {}) const {
    RawParams raw;
    raw.key_path = "transport.params";
    raw.origin = ValueOrigin{"test"};
    for (auto& value : values) {
      RawValue entry;
      entry.scalar = value.second;
      entry.origin = ValueOrigin{"test"};
      raw.entries.emplace_back(value.first, entry);
    }
    const PluginDescriptor& descriptor = plugin_->descriptor();
    return resolve_params(raw, descriptor.params, descriptor.num_params, "transport plugin 'gloo'");
  }

  std::shared_ptr<LoadedPlugin> plugin_;
};

TEST_F(GlooPlugin, DeclaresItsParametersAndIsViableOnLoopback) {
  const PluginDescriptor& descriptor = plugin_->descriptor();
  EXPECT_EQ(std::string(descriptor.name), "gloo");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < descriptor.num_params; ++i)
    names.emplace_back(descriptor.params[i].name);
  EXPECT_EQ(names, (std::vector<std::string>{"interface", "address", "timeout_s"}));
  const ParamValues defaults = params();
  EXPECT_EQ(defaults.get_string("interface"), "");
  EXPECT_EQ(defaults.get_string("address"), "127.0.0.1");
  const Viability viability = plugin_->viability();
  EXPECT_TRUE(viability.viable) << viability.reason;
}

TEST_F(GlooPlugin, RefusesAnInterfaceThatDoesNotExist) {
  try {
    plugin_->create_as<Transport>(params({{"interface", "nosuchif0"}}));
    ADD_FAILURE() << "a missing interface was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot create a TCP device on interface 'nosuchif0'"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(GlooPlugin, RefusesANegativeTimeout) {
  try {
    plugin_->create_as<Transport>(params({{"timeout_s", "-1"}}));
    ADD_FAILURE() << "a negative timeout was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("transport.params.timeout_s must be a number of seconds from 0"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(GlooPlugin, UseBeforeConnectAndAWorldOfOne) {
  std::unique_ptr<Transport> transport = plugin_->create_as<Transport>(params());
  const at::Tensor tensor = at::zeros({4});
  try {
    transport->isend(tensor, 1, 0);
    ADD_FAILURE() << "isend before connect was accepted";
  } catch (const TransportError& error) {
    EXPECT_NE(std::string(error.what()).find("isend() before connect()"), std::string::npos);
  }
  std::string pattern = std::filesystem::temp_directory_path().string() + "/baton-gloo-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  TransportContext context;
  context.rank = 0;
  context.world_size = 1;
  context.store = std::make_shared<FileStore>(pattern);
  context.timeout = std::chrono::milliseconds(5000);
  transport->connect(context);
  try {
    transport->irecv(tensor, 0, 0);
    ADD_FAILURE() << "a receive from itself was accepted";
  } catch (const TransportError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot send to or receive from itself"),
              std::string::npos);
  }
  try {
    transport->connect(context);
    ADD_FAILURE() << "a second connect was accepted";
  } catch (const TransportError& error) {
    EXPECT_NE(std::string(error.what()).find("already called"), std::string::npos);
  }
  transport.reset();
  std::filesystem::remove_all(pattern);
}

TEST_F(GlooPlugin, ConnectTimeoutNamesTheMissingPeer) {
  std::unique_ptr<Transport> transport =
      plugin_->create_as<Transport>(params({{"timeout_s", "0.3"}}));
  std::string pattern = std::filesystem::temp_directory_path().string() + "/baton-gloo-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  TransportContext context;
  context.rank = 0;
  context.world_size = 2;  // rank 1 never comes
  context.store = std::make_shared<FileStore>(pattern);
  try {
    transport->connect(context);
    ADD_FAILURE() << "connect without the peer succeeded";
  } catch (const TransportError& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("rank 0: connecting to the other 1 rank "), std::string::npos) << text;
    EXPECT_NE(text.find("within 0.3 s"), std::string::npos) << text;
  }
  transport.reset();
  std::filesystem::remove_all(pattern);
}

TEST_F(GlooPlugin, RefusesMoreThan4096InFlightOperationsPerTag) {
  baton_test::RankJob job;
  job.transport = "gloo";
  job.scenario = "gloo_in_flight_limit";
  const baton_test::JobResult result = baton_test::run_ranks(job);
  EXPECT_TRUE(result.all_succeeded()) << result.report();
}

}  // namespace
}  // namespace baton
