// The multi-rank harness must be able to report failures: a rank failing a check, and a rank
// that hangs (killed at the deadline rather than hanging the test).
#include <gtest/gtest.h>

#include "baton/error.h"
#include "baton/plugin_loader.h"
#include "rank_launcher.h"

namespace baton_test {
namespace {

void require_gloo() {
  try {
    baton::PluginLoader().load(baton::PluginKind::kTransport, "gloo");
  } catch (const baton::PluginError& error) {
    GTEST_SKIP() << "the harness tests run on the gloo transport, which is not available: "
                 << error.what();
  }
}

TEST(RankLauncher, ReportsARankThatFailsACheck) {
  require_gloo();
  if (IsSkipped()) return;
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
  require_gloo();
  if (IsSkipped()) return;
  RankJob job;
  job.transport = "gloo";
  job.scenario = "harness_hang";
  job.deadline = std::chrono::milliseconds(8000);
  const JobResult result = run_ranks(job);
  EXPECT_FALSE(result.all_succeeded());
  ASSERT_EQ(result.ranks.size(), 2u);
  EXPECT_FALSE(result.ranks[0].hung) << result.report();
  EXPECT_TRUE(result.ranks[1].hung) << result.report();
  EXPECT_LT(result.elapsed.count(), 15000);
  EXPECT_NE(result.report().find("HUNG"), std::string::npos);
}

}  // namespace
}  // namespace baton_test
