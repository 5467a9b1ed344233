// The transport conformance suite: every transport plugin, by name, runs the same scenarios
// on real processes. A plugin that is not built, or needs a GPU this machine lacks, is
// reported as skipped with the reason; one that is built but does not load or run fails.
#include <gtest/gtest.h>

#include <csignal>

#include "baton/error.h"
#include "baton/plugin_loader.h"
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

  std::shared_ptr<baton::LoadedPlugin> plugin_;
};

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
  expect_success("all_reduce_sizes", 2);
  expect_success("all_reduce_sizes", 3);
}

TEST_P(TransportConformance, AllReduceInSeveralGroupsAtOnce) {
  expect_success("all_reduce_groups", 4);
}

TEST_P(TransportConformance, AllReduceWithAKilledMemberFailsTheOthersFast) {
  const JobResult result = run("all_reduce_peer_killed", 3);
  ASSERT_EQ(result.ranks.size(), 3u);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(result.ranks[rank].exited && result.ranks[rank].exit_code == 0) << result.report();
  }
  EXPECT_TRUE(!result.ranks[2].hung && result.ranks[2].signal == SIGKILL) << result.report();
}

TEST_P(TransportConformance, AllReduceTimeoutNamesItAndAbortsTheTransport) {
  expect_success("all_reduce_timeout", 2);
}

TEST_P(TransportConformance, AllReduceRejectsBadGroupsAndTensors) {
  expect_success("all_reduce_rejects", 2);
}

INSTANTIATE_TEST_SUITE_P(Transports, TransportConformance, ::testing::Values("gloo", "ucx", "nccl"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace baton_test
