// A run's curves (curves.svg): drawn from metrics.jsonl by every run at its end and by
// `baton plot RUN_DIR` at any time, a line cut short by a running writer skipped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "baton/error.h"
#include "run_command.h"
#include "run_curves.h"

namespace {

using testing::HasSubstr;

const std::string kMetrics =
    "{\"run\":\"r\",\"ranks\":2}\n"
    "{\"step\":1,\"loss\":4.5,\"lr\":0.0015,\"grad_norm\":2.5,\"step_time_s\":0.1}\n"
    "{\"step\":2,\"loss\":4.0,\"lr\":0.003,\"grad_norm\":2.0,\"eval_loss\":4.2}\n"
    "{\"step\":3,\"loss\":3.5,\"lr\":0.002,\"grad_norm\":1.5,\"eval_loss\":3.9}\n"
    "{\"step\":4,\"loss\":3.";  // a line the writer has not finished

TEST(RunCurves, LossEvalLossRateAndNormAgainstTheStep) {
  const std::string svg = baton_app::render_run_curves(kMetrics, "r");
  EXPECT_THAT(svg, HasSubstr("r: loss"));
  EXPECT_THAT(svg, HasSubstr("eval loss"));
  EXPECT_THAT(svg, HasSubstr("learning rate"));
  EXPECT_THAT(svg, HasSubstr("lr (x 1e-3)"));  // ticks readable at any scale
  EXPECT_THAT(svg, HasSubstr("gradient norm (before clipping)"));
  EXPECT_THAT(svg, HasSubstr("<svg y=\"800\""));  // three charts, one under the other
  EXPECT_EQ(svg.rfind("</svg>\n") + 7, svg.size());
}

TEST(RunCurves, ARunWithoutTheRecipesFiguresHasItsLossAlone) {
  const std::string svg =
      baton_app::render_run_curves("{\"step\":1,\"loss\":2.0}\n{\"step\":2,\"loss\":1.0}\n", "r");
  EXPECT_THAT(svg, HasSubstr("r: loss"));
  EXPECT_THAT(svg, testing::Not(HasSubstr("learning rate")));
  EXPECT_THAT(svg, testing::Not(HasSubstr("<svg y=\"400\"")));
}

TEST(RunCurves, BatonPlotWritesTheFileAndNamesWhatIsMissing) {
  const std::string dir = ::testing::TempDir() + "/run-curves";
  baton_test::run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "/run'");
  std::ofstream(dir + "/run/metrics.jsonl") << kMetrics;
  const auto plotted =
      baton_test::run_command(std::string(BATON_BINARY) + " plot '" + dir + "/run'");
  ASSERT_EQ(plotted.exit_code, 0) << plotted.output;
  EXPECT_THAT(plotted.output, HasSubstr("curves: " + dir + "/run/curves.svg"));
  std::ifstream written(dir + "/run/curves.svg");
  EXPECT_TRUE(written.good());
  const auto missing =
      baton_test::run_command(std::string(BATON_BINARY) + " plot '" + dir + "/nothing'");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.output,
              HasSubstr("cannot read metrics file '" + dir + "/nothing/metrics.jsonl'"));
  std::ofstream(dir + "/run/metrics.jsonl") << "{\"run\":\"r\"}\n";
  const auto empty = baton_test::run_command(std::string(BATON_BINARY) + " plot '" + dir + "/run'");
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_THAT(empty.output, HasSubstr("the metrics hold no step yet"));
}

}  // namespace
