// The child side of a multi-rank test: one process, one rank. It reads its rank and the
// scenario from the environment (set by run_ranks), meets the other ranks through a real
// rendezvous store, loads the transport through the real plugin loader, connects, and runs
// the scenario. Exit code 0: passed; 1: a check failed; 2: an unexpected exception.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "baton/plugin_loader.h"
#include "baton/store.h"
#include "baton/transport.h"
#include "baton/transport_interfaces.h"

namespace baton_test {

// Timeout for waits that are expected to succeed: generous, far below the launcher's deadline.
constexpr std::chrono::milliseconds kWait{60000};

class ScenarioFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RankContext {
  int rank = 0;
  int world_size = 1;
  std::string transport_name;
  std::shared_ptr<baton::Store> store;  // the scenario's own namespace of the run's store
  std::shared_ptr<baton::LoadedPlugin> plugin;
  baton::PluginPtr<baton::Transport> transport;
  baton::TransportInterfaces interfaces;  // what the plugin lists beyond version 1

  ~RankContext();  // the transport goes before its plugin

  // Returns when every rank called barrier(name).
  void barrier(const std::string& name);
  int next_rank() const { return (rank + 1) % world_size; }
  int previous_rank() const { return (rank + world_size - 1) % world_size; }
};

// Throws ScenarioFailure with `message` unless `condition` holds.
void check(bool condition, const std::string& message);
// Runs `action`, which must throw baton::TransportError; returns its message.
std::string expect_transport_error(const std::string& what, const std::function<void()>& action);
// Checks that `text` contains `part`.
void expect_contains(const std::string& text, const std::string& part);

// Where the scenario's tensors live: the CPU, or the rank's GPU (cuda:<rank>) for a transport
// that moves device memory only (nccl: its TransportV2::supports_device says no to the CPU).
// Set by child_main before the scenario runs; every tensor helper below allocates there, and
// checks read values back to the CPU.
at::Device scenario_device();
void set_scenario_device(at::Device device);

// Deterministic, position-dependent bytes, so misplaced or reordered data is caught.
at::Tensor pattern_bytes(std::size_t bytes, std::uint64_t seed);
// Throws ScenarioFailure naming the first differing byte.
void check_pattern(const at::Tensor& tensor, std::uint64_t seed, const std::string& what);
at::Tensor empty_bytes(std::size_t bytes);

// Entry point of a child process; `scenario` names one of scenarios.h.
int child_main(const std::string& scenario);

}  // namespace baton_test
