// The transport conformance suite: every transport plugin, by name, runs the same scenarios
// on real processes. A plugin that is not built, or needs a GPU this machine lacks, is
// reported as skipped with the reason; one that is built but does not load or run fails.
//
// A third party runs it on its own plugin by path (docs/writing-a-transport.md):
//   export BATON_CONFORMANCE_TRANSPORTS=/path/libbaton-transport-mine.so
//   build/bin/transport_tests --gtest_filter='Transports/*'
// (colon-separated paths; CTest runs it on the example store transport, built against this
// SDK and against ABI 2.0's, the same way). The all-reduce cases skip a plugin that does not
// list baton.all_reduce.
#include <gtest/gtest.h>

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <sstream>

#include "baton/error.h"
#include "baton/params.h"
#include "baton/plugin_loader.h"
#include "baton/transport_interfaces.h"
#include "plugin_for_test.h"
#include "rank_launcher.h"

namespace baton_test {
namespace {

class TransportConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    BATON_REQUIRE_PLUGIN(plugin, baton::PluginKind::kTransport, GetParam());
    plugin_ = plugin.plugin;
  }

  JobResult run(const std::string& scenario, int world_size,
                const std::string& rendezvous = "file") {
    RankJob job;
    job.transport = GetParam();
    job.scenario = scenario;
    job.world_size = world_size;
    job.rendezvous = rendezvous;
    return run_ranks(job);
  }

  void expect_success(const std::string& scenario, int world_size,
                      const std::string& rendezvous = "file") {
    const JobResult result = run(scenario, world_size, rendezvous);
    EXPECT_TRUE(result.all_succeeded())
        << scenario << " on " << world_size << " ranks, " << result.report();
  }

  // The all-reduce cases: a plugin that does not list baton.all_reduce has nothing to test.
  bool lists_all_reduce() const {
    return baton::declares(plugin_->descriptor(), baton::kAllReduceInterface);
  }

  std::shared_ptr<baton::LoadedPlugin> plugin_;
};

#define SKIP_UNLESS_IT_ALL_REDUCES()                                                  \
  if (!lists_all_reduce())                                                            \
  GTEST_SKIP() << "transport '" << GetParam() << "' does not list baton.all_reduce, " \
               << "so it is not asked to reduce"

// The object is what the descriptor lists (baton::transport_interfaces refuses a list its
// object does not live up to), and a transport of version 2 says which devices it moves: never
// meta tensors, and the CPU or a GPU.
TEST_P(TransportConformance, ItsObjectIsWhatItsDescriptorLists) {
  baton::RawParams raw;
  raw.key_path = "transport.params";
  raw.origin = baton::ValueOrigin{"default"};
  const baton::PluginDescriptor& descriptor = plugin_->descriptor();
  const auto transport = plugin_->create_as<baton::Transport>(baton::resolve_params(
      raw, descriptor.params, descriptor.num_params, "transport plugin '" + GetParam() + "'"));
  const baton::TransportInterfaces found = baton::transport_interfaces(descriptor, *transport);
  if (found.v2 == nullptr) return;  // version 1: it is not asked
  const baton::Viability meta = found.v2->supports_device(c10::Device(c10::kMeta));
  EXPECT_FALSE(meta.viable);
  EXPECT_FALSE(meta.reason.empty());
  EXPECT_TRUE(found.v2->supports_device(c10::Device(c10::kCPU)).viable ||
              found.v2->supports_device(c10::Device(c10::kCUDA, 0)).viable);
}

TEST_P(TransportConformance, SmallAndOddSizes) {
  expect_success("small_sizes", 2);
}

TEST_P(TransportConformance, LargeSizesUpTo64MiB) {
  expect_success("large_sizes", 2);
}

TEST_P(TransportConformance, EveryCpuDtype) {
  expect_success("dtypes", 2);
}

TEST_P(TransportConformance, ManyOutstandingOpsCompleteOutOfOrder) {
  expect_success("out_of_order", 2);
}

TEST_P(TransportConformance, SameTagMessagesArriveInSendOrder) {
  expect_success("same_tag_order", 2);
}

TEST_P(TransportConformance, SameTensorsReusedEveryStep) {
  expect_success("reused_tensors", 2);
}

TEST_P(TransportConformance, AllToAllOnThreeRanks) {
  expect_success("all_to_all", 3);
}

TEST_P(TransportConformance, AllToAllOnFourRanks) {
  expect_success("all_to_all", 4);
}

TEST_P(TransportConformance, RingOverTcpStoreRendezvous) {
  expect_success("ring", 3, "tcp");
}

TEST_P(TransportConformance, RejectsUnusableTensorsAndPeers) {
  expect_success("rejects", 2);
}

// A size mismatch is reported naming both sizes, and the sender's wait ends too; whether the
// transport is usable afterwards is not promised (the runtime ends a run on it).
TEST_P(TransportConformance, WrongSizeReceiveNamesBothSizes) {
  expect_success("wrong_size", 2);
  expect_success("wrong_size_larger_receive", 2);
}

TEST_P(TransportConformance, WrongSizeIsFoundWhicheverSidePostsFirst) {
  expect_success("wrong_size_receive_first", 2);
  expect_success("wrong_size_send_first", 2);
  expect_success("wrong_size_after_matches", 2);
}

TEST_P(TransportConformance, TimeoutNamesThePeerAndAbortsTheTransport) {
  expect_success("timeout", 2);
}

TEST_P(TransportConformance, KilledPeerFailsTheSurvivorFast) {
  const JobResult result = run("peer_killed", 2);
  ASSERT_EQ(result.ranks.size(), 2u);
  const RankOutcome& survivor = result.ranks[0];
  const RankOutcome& victim = result.ranks[1];
  EXPECT_TRUE(survivor.exited && survivor.exit_code == 0) << result.report();
  EXPECT_TRUE(!victim.hung && victim.signal == SIGKILL) << result.report();
}

TEST_P(TransportConformance, AbortFailsPendingAndFutureOpsFast) {
  expect_success("abort", 2);
}

// All-reduce (baton/all_reduce.h): every built-in transport can reduce.
TEST_P(TransportConformance, AllReduceSumsExactlyAtEverySizeAndDtype) {
  SKIP_UNLESS_IT_ALL_REDUCES();
  expect_success("all_reduce_sizes", 2);
  expect_success("all_reduce_sizes", 3);
}

TEST_P(TransportConformance, AllReduceInSeveralGroupsAtOnce) {
  SKIP_UNLESS_IT_ALL_REDUCES();
  expect_success("all_reduce_groups", 4);
}

TEST_P(TransportConformance, AllReduceWithAKilledMemberFailsTheOthersFast) {
  SKIP_UNLESS_IT_ALL_REDUCES();
  const JobResult result = run("all_reduce_peer_killed", 3);
  ASSERT_EQ(result.ranks.size(), 3u);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(result.ranks[rank].exited && result.ranks[rank].exit_code == 0) << result.report();
  }
  EXPECT_TRUE(!result.ranks[2].hung && result.ranks[2].signal == SIGKILL) << result.report();
}

TEST_P(TransportConformance, AllReduceTimeoutNamesItAndAbortsTheTransport) {
  SKIP_UNLESS_IT_ALL_REDUCES();
  expect_success("all_reduce_timeout", 2);
}

TEST_P(TransportConformance, AllReduceRejectsBadGroupsAndTensors) {
  SKIP_UNLESS_IT_ALL_REDUCES();
  expect_success("all_reduce_rejects", 2);
}

// Reduce-scatter and all-gather (baton/shard_collectives.h), for a sharded optimizer: the
// built-in transports list them; one that does not is not asked.
#define SKIP_UNLESS_IT_SHARDS()                                                              \
  if (!baton::declares(plugin_->descriptor(), baton::kShardCollectivesInterface))            \
  GTEST_SKIP() << "transport '" << GetParam() << "' does not list baton.shard_collectives, " \
               << "so it is not asked to shard"

TEST_P(TransportConformance, ReduceScatterAndAllGatherAreExactAtEverySizeAndDtype) {
  SKIP_UNLESS_IT_SHARDS();
  expect_success("shard_collective_sizes", 2);
  expect_success("shard_collective_sizes", 3);
}

TEST_P(TransportConformance, ReduceScatterWithAKilledMemberFailsTheOthersFast) {
  SKIP_UNLESS_IT_SHARDS();
  const JobResult result = run("shard_collective_peer_killed", 3);
  ASSERT_EQ(result.ranks.size(), 3u);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(result.ranks[rank].exited && result.ranks[rank].exit_code == 0) << result.report();
  }
  EXPECT_TRUE(!result.ranks[2].hung && result.ranks[2].signal == SIGKILL) << result.report();
}

TEST_P(TransportConformance, ShardCollectivesRejectShardsOfTheWrongSize) {
  SKIP_UNLESS_IT_SHARDS();
  expect_success("shard_collective_rejects", 2);
}

// The built-in transports by name, and any plugin files BATON_CONFORMANCE_TRANSPORTS names.
std::vector<std::string> transports_under_test() {
  std::vector<std::string> transports = {"gloo", "ucx", "nccl"};
  if (const char* paths = std::getenv("BATON_CONFORMANCE_TRANSPORTS")) {
    std::stringstream list(paths);
    for (std::string path; std::getline(list, path, ':');) {
      if (!path.empty()) transports.push_back(path);
    }
  }
  return transports;
}

// A test name from a plugin name or path: its file name's letters and digits.
std::string test_name_of(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(info.param.find_last_of('/') + 1);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Transports, TransportConformance,
                         ::testing::ValuesIn(transports_under_test()), test_name_of);

}  // namespace
}  // namespace baton_test
