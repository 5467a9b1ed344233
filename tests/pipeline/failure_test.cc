// A failure inside one action is reported on its rank with the rank, step, action and the
// marked plan; the other ranks fail with a clear error instead of hanging; the launcher
// names the first failure. Validators fire on purpose-made bad runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "launch_run.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;

std::vector<std::string> small_mlp_run(const std::string& schedule) {
  return {"model.name=mlp",
          "model.params.in_features=8",
          "model.params.hidden=8",
          "model.params.layers=2",
          "model.params.out_features=3",
          "data.source=synthetic",
          "data.batch_size=8",
          "schedule.name=" + schedule,
          "schedule.microbatches=4",
          "run.steps=3"};
}

TEST(PipelineFailure, InjectedFailureIsAnnotatedAndStopsEveryRank) {
  // world.timeout_s is 120 s but the launch is killed after 60 s (a hang guard, not a timed
  // assertion): only an abort that reaches rank 0 lets this run end in time, and rank 0's
  // error must name that cause, not a timeout.
  auto settings = small_mlp_run("1f1b");
  settings.push_back("world.timeout_s=120");
  setenv("BATON_INJECT_FAILURE", "rank=1,step=2,action=1B2", 1);
  const auto result = baton_test::launch(kBaton, 2, settings, "inject", /*timeout_s=*/60);
  unsetenv("BATON_INJECT_FAILURE");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  // The failing rank's own report.
  EXPECT_THAT(out, HasSubstr("[rank 1] rank 1 failed: rank 1, training step 2, timestep"));
  EXPECT_THAT(out, HasSubstr("of schedule '1f1b', action 1B2: injected failure"));
  EXPECT_THAT(
      out, testing::ContainsRegex("\\[rank 1\\] Step [0-9]+:.*1B2 +<-- ERROR HERE \\(rank 1\\)"));
  // The other rank fails because its peer went away, with its own annotated error.
  const std::size_t rank0 = out.find("[rank 0] rank 0 failed: rank 0, training step 2, timestep");
  ASSERT_NE(rank0, std::string::npos) << out;
  const std::string rank0_error = out.substr(rank0, out.find('\n', rank0) - rank0);
  EXPECT_THAT(rank0_error, HasSubstr("peer rank 1 closed the connection")) << rank0_error;
  EXPECT_THAT(out, testing::Not(HasSubstr("timed out")));
  EXPECT_THAT(out, HasSubstr("launch: rank 1 failed first (exit code 1)"));
}

TEST(PipelineFailure, FiniteValidatorNamesStageAndMicrobatch) {
  auto settings = small_mlp_run("gpipe");
  settings.push_back("world.timeout_s=20");
  settings.push_back("validation.validators=[shape_dtype, finite]");
  settings.push_back("optimizer.name=sgd");
  settings.push_back("optimizer.lr=1e30");  // the first update blows the weights up
  const auto result = baton_test::launch(kBaton, 2, settings, "finite");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  EXPECT_THAT(out, testing::ContainsRegex(
                       "stage [01] (forward output|gradient of input) 0 "
                       "\\(microbatch [0-9]\\): [0-9]+ of [0-9]+ values are not finite"));
  EXPECT_THAT(out, HasSubstr("training step 2"));
}

}  // namespace
