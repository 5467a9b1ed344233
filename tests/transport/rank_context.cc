#include "rank_context.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "baton/config.h"
#include "baton/stores.h"
#include "rank_launcher.h"
#include "scenarios.h"

namespace baton_test {

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr)
    throw std::runtime_error(std::string("missing environment variable ") + name);
  return value;
}

std::uint8_t pattern_byte(std::size_t index, std::uint64_t seed) {
  const std::uint64_t mixed =
      (index + 1) * 0x9E3779B97F4A7C15ULL ^ (seed + 1) * 0xC2B2AE3D27D4EB4FULL;
  return static_cast<std::uint8_t>(mixed >> 56);
}

at::Device& device_slot() {
  static at::Device device(at::kCPU);
  return device;
}

}  // namespace

at::Device scenario_device() {
  return device_slot();
}

void set_scenario_device(at::Device device) {
  device_slot() = device;
}

RankContext::~RankContext() {
  transport.reset();
}

void RankContext::barrier(const std::string& name) {
  const std::int64_t arrived = store->add("barrier/" + name, 1);
  if (arrived == world_size) store->set("barrier/" + name + "/open", {1});
  store->get("barrier/" + name + "/open", kWait);
}

void check(bool condition, const std::string& message) {
  if (!condition) throw ScenarioFailure(message);
}

std::string expect_transport_error(const std::string& what, const std::function<void()>& action) {
  try {
    action();
  } catch (const baton::TransportError& error) {
    return error.what();
  }
  throw ScenarioFailure(what + ": expected a TransportError, but it succeeded");
}

void expect_contains(const std::string& text, const std::string& part) {
  check(text.find(part) != std::string::npos,
        "expected the message to contain\n    \"" + part + "\"\n  got\n    \"" + text + "\"");
}

at::Tensor empty_bytes(std::size_t bytes) {
  return at::empty({static_cast<std::int64_t>(bytes)},
                   at::TensorOptions().dtype(at::kByte).device(scenario_device()));
}

at::Tensor pattern_bytes(std::size_t bytes, std::uint64_t seed) {
  at::Tensor tensor = at::empty({static_cast<std::int64_t>(bytes)}, at::kByte);
  std::uint8_t* data = tensor.data_ptr<std::uint8_t>();
  for (std::size_t i = 0; i < bytes; ++i) data[i] = pattern_byte(i, seed);
  return tensor.to(scenario_device());
}

void check_pattern(const at::Tensor& received, std::uint64_t seed, const std::string& what) {
  const at::Tensor tensor = received.cpu();
  const std::size_t bytes = static_cast<std::size_t>(tensor.numel());
  const std::uint8_t* data = tensor.data_ptr<std::uint8_t>();
  for (std::size_t i = 0; i < bytes; ++i) {
    if (data[i] != pattern_byte(i, seed)) {
      throw ScenarioFailure(what + ": byte " + std::to_string(i) + " of " + std::to_string(bytes) +
                            " is " + std::to_string(data[i]) + ", expected " +
                            std::to_string(pattern_byte(i, seed)));
    }
  }
}

// Polls the store's "departed" count until every rank is counted, at most kWait.
void wait_for_departures(baton::Store& store, int world_size) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (store.add("departed", 0) < world_size) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw ScenarioFailure("rank 0: the other ranks never finished with the store it hosts");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int child_main(const std::string& scenario_name) {
  RankContext context;
  try {
    context.rank = std::stoi(environment(kEnvRank));
    context.world_size = std::stoi(environment(kEnvWorldSize));
    context.transport_name = environment(kEnvTransport);
    const Scenario scenario = find_scenario(scenario_name);

    baton::RendezvousOptions options;
    options.kind = environment(kEnvRendezvous);
    options.file = environment(kEnvStoreFolder);
    if (options.kind == "tcp") options.port = std::stoi(environment(kEnvStorePort));
    options.rank = context.rank;
    options.world_size = context.world_size;
    options.timeout = kWait;
    options.run_id = environment(kEnvRunId);
    std::shared_ptr<baton::Store> run_store = baton::make_rendezvous_store(options);
    context.store = std::make_shared<baton::PrefixStore>("scenario", run_store);

    context.plugin =
        baton::PluginLoader().load(baton::PluginKind::kTransport, context.transport_name);
    const baton::PluginDescriptor& descriptor = context.plugin->descriptor();
    baton::RawParams raw;
    raw.key_path = "transport.params";
    raw.origin = baton::ValueOrigin{"default"};
    const baton::ParamValues params =
        baton::resolve_params(raw, descriptor.params, descriptor.num_params,
                              "transport plugin '" + context.transport_name + "'");
    context.transport = context.plugin->create_as<baton::Transport>(params);
    context.interfaces = baton::transport_interfaces(descriptor, *context.transport);
    // A transport that says it cannot move CPU tensors moves the rank's GPU's (version 1 of
    // the interface cannot say: CPU).
    if (context.interfaces.v2 != nullptr &&
        !context.interfaces.v2->supports_device(at::Device(at::kCPU)).viable) {
      set_scenario_device(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(context.rank)));
    }

    baton::TransportContext transport_context;
    transport_context.rank = context.rank;
    transport_context.world_size = context.world_size;
    transport_context.store = std::make_shared<baton::PrefixStore>("transport", run_store);
    transport_context.timeout = kWait;
    transport_context.device = scenario_device();
    context.transport->connect(transport_context);

    scenario(context);
    // With a TCP store rank 0 hosts it, and its exit closes it: it waits until every rank is
    // done with the store (a peer may still be reading the last barrier's key).
    if (options.kind == "tcp") {
      context.store->add("departed", 1);
      if (context.rank == 0) wait_for_departures(*context.store, context.world_size);
    }
    return 0;
  } catch (const ScenarioFailure& failure) {
    std::cerr << "rank " << context.rank << ": FAILED: " << failure.what() << std::endl;
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "rank " << context.rank << ": unexpected exception: " << error.what() << std::endl;
    return 2;
  }
}

}  // namespace baton_test
