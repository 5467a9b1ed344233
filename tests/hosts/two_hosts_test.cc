// Across hosts (docs/reliability.md): two ranks in network namespaces of their own, joined by
// a veth pair, train over Gloo and over UCX across that link; then the link is cut mid-run
// and both ranks must stop on their own (world.timeout_s 5, heartbeat_s 2), each naming the
// other, well inside the script's 120 s guard. two_hosts.sh does the namespaces; skipped,
// with the reason, where the machine does not allow them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "run_command.h"

namespace {

using testing::HasSubstr;

class TwoHosts : public testing::TestWithParam<std::string> {};

TEST_P(TwoHosts, TrainAcrossALinkAndStopClearlyWhenItIsCut) {
  const std::string transport = GetParam();
  const std::string work = testing::TempDir() + "/two-hosts-" + transport;
  const auto result = baton_test::run_command(std::string("timeout -k 5 200 ") + TWO_HOSTS_SCRIPT +
                                              " " + BATON_BINARY + " " + transport + " " + work);
  const std::string& out = result.output;
  std::smatch skip;
  if (result.exit_code == 77 && std::regex_search(out, skip, std::regex("two-hosts: skip: (.*)"))) {
    GTEST_SKIP() << skip[1];
  }
  std::cout << out.substr(0, out.find("--- rank 0")) << std::flush;
  ASSERT_THAT(out, HasSubstr("two-hosts: trained across the link")) << out;
  ASSERT_THAT(out, HasSubstr("two-hosts: link cut")) << out;
  // Both stopped by themselves with an error (exit 1), not by the guard (124) or a crash.
  EXPECT_THAT(out, HasSubstr("two-hosts: rank 0 exit 1 after")) << out;
  EXPECT_THAT(out, HasSubstr("two-hosts: rank 1 exit 1 after")) << out;
  // Each names the other: rank 0 through the heartbeat, rank 1 at its transfer's timeout.
  EXPECT_THAT(out, testing::ContainsRegex("rank 0 failed: rank 0, training step [0-9]+, "
                                          "timestep [0-9]+ of schedule '1f1b', action "
                                          "[^\n]*(from|to) rank 1"))
      << out;
  EXPECT_THAT(out, testing::ContainsRegex("rank 1 failed: rank 1, training step [0-9]+, "
                                          "timestep [0-9]+ of schedule '1f1b', action "
                                          "[^\n]*(from|to) rank 0"))
      << out;
  EXPECT_THAT(out, HasSubstr("<-- ERROR HERE (rank 0)"));
  EXPECT_THAT(out, HasSubstr("<-- ERROR HERE (rank 1)"));
}

INSTANTIATE_TEST_SUITE_P(Transports, TwoHosts, testing::Values("gloo", "ucx"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
