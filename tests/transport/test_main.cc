// The test binary is also the rank process of multi-rank tests: run_ranks() re-executes it
// with the scenario in the environment, and then it runs that one rank instead of GoogleTest.
#include <gtest/gtest.h>

#include <cstdlib>

#include "rank_context.h"
#include "rank_launcher.h"

int main(int argc, char** argv) {
  if (const char* scenario = std::getenv(baton_test::kEnvScenario)) {
    return baton_test::child_main(scenario);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
