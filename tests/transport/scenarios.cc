#include "scenarios.h"

#include <map>
#include <stdexcept>
#include <thread>

namespace baton_test {

namespace {

// For the launcher's own tests: a rank that fails a check, and one that never finishes.
void scenario_harness_fail(RankContext& ctx) {
  // Only once both ranks are through connect(): a rank that exits while its peer is still
  // connecting makes the peer's connect fail too, which is not what this tests.
  ctx.barrier("connected");
  check(ctx.rank != 1, "rank 1 fails on purpose");
}

void scenario_harness_hang(RankContext& ctx) {
  if (ctx.rank == 1) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace

Scenario find_scenario(const std::string& name) {
  static const std::map<std::string, Scenario> scenarios = {
      {"small_sizes", scenario_small_sizes},
      {"large_sizes", scenario_large_sizes},
      {"dtypes", scenario_dtypes},
      {"out_of_order", scenario_out_of_order},
      {"same_tag_order", scenario_same_tag_order},
      {"reused_tensors", scenario_reused_tensors},
      {"all_to_all", scenario_all_to_all},
      {"ring", scenario_ring},
      {"rejects", scenario_rejects},
      {"wrong_size", scenario_wrong_size},
      {"wrong_size_larger_receive", scenario_wrong_size_larger_receive},
      {"wrong_size_receive_first", scenario_wrong_size_receive_first},
      {"wrong_size_send_first", scenario_wrong_size_send_first},
      {"wrong_size_after_matches", scenario_wrong_size_after_matches},
      {"timeout", scenario_timeout},
      {"peer_killed", scenario_peer_killed},
      {"abort", scenario_abort},
      {"all_reduce_sizes", scenario_all_reduce_sizes},
      {"all_reduce_groups", scenario_all_reduce_groups},
      {"all_reduce_peer_killed", scenario_all_reduce_peer_killed},
      {"all_reduce_timeout", scenario_all_reduce_timeout},
      {"all_reduce_rejects", scenario_all_reduce_rejects},
      {"shard_collective_sizes", scenario_shard_collective_sizes},
      {"shard_collective_peer_killed", scenario_shard_collective_peer_killed},
      {"shard_collective_rejects", scenario_shard_collective_rejects},
      {"gloo_in_flight_limit", scenario_gloo_in_flight_limit},
      {"harness_fail", scenario_harness_fail},
      {"harness_hang", scenario_harness_hang},
  };
  auto found = scenarios.find(name);
  if (found == scenarios.end()) throw std::runtime_error("unknown scenario '" + name + "'");
  return found->second;
}

}  // namespace baton_test
