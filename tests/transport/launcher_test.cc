// The multi-rank harness must be able to report failures: a rank failing a check, and a rank
// that hangs (killed at the deadline rather than hanging the test).
#include <gtest/gtest.h>

#include "plugin_for_test.h"
#include "rank_launcher.h"

namespace baton_test {
namespace {

TEST(RankLauncher, ReportsARankThatFailsACheck) {
  BATON_REQUIRE_PLUGIN(gloo, baton::PluginKind::kTransport, "gloo");
  RankJob job;
  job.transport = "gloo";
  job.scenario = "harness_fail";
  const JobResult result = run_ranks(job);
  EXPECT_FALSE(result.all_succeeded());
  ASSERT_EQ(result.ranks.size(), 2u);
  EXPECT_EQ(result.ranks[0].exit_code, 0) << result.report();
  EXPECT_EQ(result.ranks[1].exit_code, 1) << result.report();
  EXPECT_NE(result.ranks[1].output.find("rank 1: FAILED: rank 1 fails on purpose"),
            std::string::npos)
      << result.report();
}

TEST(RankLauncher, KillsARankThatHangsPastTheDeadline) {
  BATON_REQUIRE_PLUGIN(gloo, baton::PluginKind::kTransport, "gloo");
  RankJob job;
  job.transport = "gloo";
  job.scenario = "harness_hang";
  // Rank 0 connects and returns in about a second; the deadline is ten times that, so only
  // the rank that hangs reaches it (the test waits this long, on no CPU, holding one of
  // CTest's slots).
  job.deadline = std::chrono::milliseconds(10000);
  const JobResult result = run_ranks(job);
  EXPECT_FALSE(result.all_succeeded());
  ASSERT_EQ(result.ranks.size(), 2u);
  EXPECT_FALSE(result.ranks[0].hung) << result.report();
  EXPECT_TRUE(result.ranks[1].hung) << result.report();
  EXPECT_NE(result.report().find("HUNG"), std::string::npos);
}

}  // namespace
}  // namespace baton_test
