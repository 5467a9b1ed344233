// The conformance scenarios, each run by every rank of a multi-rank job (rank_context.h).
// Every transport must pass all of them.
#pragma once

#include <functional>
#include <string>

#include "rank_context.h"

namespace baton_test {

using Scenario = std::function<void(RankContext&)>;

// Throws std::runtime_error for an unknown name.
Scenario find_scenario(const std::string& name);

// Scenarios by theme (scenarios_data.cc, scenarios_failures.cc).
void scenario_small_sizes(RankContext& ctx);
void scenario_large_sizes(RankContext& ctx);
void scenario_dtypes(RankContext& ctx);
void scenario_out_of_order(RankContext& ctx);
void scenario_same_tag_order(RankContext& ctx);
void scenario_reused_tensors(RankContext& ctx);
void scenario_all_to_all(RankContext& ctx);
void scenario_ring(RankContext& ctx);
void scenario_rejects(RankContext& ctx);
void scenario_wrong_size(RankContext& ctx);
void scenario_wrong_size_larger_receive(RankContext& ctx);
void scenario_wrong_size_receive_first(RankContext& ctx);
void scenario_wrong_size_send_first(RankContext& ctx);
void scenario_wrong_size_after_matches(RankContext& ctx);
void scenario_timeout(RankContext& ctx);
void scenario_peer_killed(RankContext& ctx);
void scenario_abort(RankContext& ctx);

// All-reduce (scenarios_all_reduce.cc).
void scenario_all_reduce_sizes(RankContext& ctx);
void scenario_all_reduce_groups(RankContext& ctx);
void scenario_all_reduce_peer_killed(RankContext& ctx);
void scenario_all_reduce_timeout(RankContext& ctx);
void scenario_all_reduce_rejects(RankContext& ctx);
// Reduce-scatter and all-gather (scenarios_all_reduce.cc).
void scenario_shard_collective_sizes(RankContext& ctx);
void scenario_shard_collective_peer_killed(RankContext& ctx);
void scenario_shard_collective_rejects(RankContext& ctx);

// gloo only (scenarios_gloo.cc).
void scenario_gloo_in_flight_limit(RankContext& ctx);

}  // namespace baton_test
