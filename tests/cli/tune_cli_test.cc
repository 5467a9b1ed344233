// `baton tune` as a user runs it: a real model measured in a real process, the profile
// cached in the run folder and reused, the ranked table and its JSON — never the speeds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_command.h"

namespace {

using baton_test::run_command;
using baton_test::run_command_stdout;
using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;

std::string tune_command(const std::string& dir, const std::string& extra) {
  return kBaton +
         " tune --no-env --set model.name=mlp --set model.params.in_features=16"
         " --set model.params.hidden=32 --set model.params.layers=4"
         " --set model.params.out_features=4 --set data.source=synthetic"
         " --set data.batch_size=8 --set world.ranks=2 --set schedule.name=auto"
         " --set run.output_dir='" +
         dir + "'" + extra;
}

TEST(CliTune, MeasuresRanksAndReusesItsProfile) {
  const std::string dir = testing::TempDir() + "/tune-cli";
  run_command("rm -rf '" + dir + "'");
  const auto first = run_command(tune_command(dir, ""));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("profile: measured and written to " + dir));
  // The split backward timed at stage level as a rank runs it: a factor on the units' I and W.
  EXPECT_THAT(first.output, testing::ContainsRegex("a stage's split backward x[0-9]+\\.[0-9]{3} "
                                                   "its units'"));
  {
    std::ifstream written(dir + "/baton/profile.json");
    const nlohmann::json profile = nlohmann::json::parse(written, nullptr, false);
    ASSERT_TRUE(profile.is_object());
    const double factor = profile["split_backward_factor"].get<double>();
    EXPECT_GT(factor, 0.0);
    EXPECT_TRUE(std::isfinite(factor));
    // The printed factor is the one written (printed to 3 decimals). (Not std::regex: GCC 12
    // warns inside <regex> under the sanitizer build, and warnings fail it.)
    const std::string mark = "split backward x";
    const std::size_t at = first.output.find(mark);
    ASSERT_NE(at, std::string::npos) << first.output;
    EXPECT_NEAR(std::stod(first.output.substr(at + mark.size())), factor, 0.5e-3 + 1e-9);
  }
  EXPECT_THAT(first.output, testing::ContainsRegex("schedule +stages/rk +microbatches +cuts +"
                                                   "predicted ms +bubble +peak mem/rank"));
  EXPECT_THAT(first.output, HasSubstr("chosen: "));
  // The batch of 8 is searched as 1, 2, 4 and 8 microbatches (none fixed in the config).
  const auto json = run_command_stdout(tune_command(dir, " --format json"));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json result = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_TRUE(result.is_object()) << json.output;
  std::set<int> counts;
  ASSERT_FALSE(result["ranked"].empty());
  const int units = result["ranked"][0]["bounds"].back().get<int>();
  for (const auto& candidate : result["ranked"]) {
    counts.insert(candidate["microbatches"].get<int>());
    EXPECT_GT(candidate["predicted_step_s"].get<double>(), 0.0);
    // Cuts over the model's units, one stage per rank and per stage on it.
    EXPECT_EQ(candidate["bounds"].front(), 0);
    EXPECT_EQ(candidate["bounds"].back(), units);
    EXPECT_EQ(candidate["bounds"].size(), 1 + 2 * candidate["stages_per_rank"].get<std::size_t>());
  }
  EXPECT_EQ(counts, (std::set<int>{1, 2, 4, 8}));
  // The second run reused the profile; a profile of another model is measured again.
  const auto second = run_command(tune_command(dir, " --top 2"));
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("profile: reused " + dir));
  const auto other = run_command(tune_command(dir, " --set model.params.hidden=16"));
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_THAT(other.output, HasSubstr("was measured for another model, batch or machine"));
  EXPECT_THAT(other.output, HasSubstr("profile: measured and written to"));
  // A fixed microbatch count is kept; a memory limit nothing fits is refused with the need.
  const auto fixed =
      run_command_stdout(tune_command(dir, " --set schedule.microbatches=2 --format json"));
  ASSERT_EQ(fixed.exit_code, 0) << fixed.output;
  for (const auto& candidate : nlohmann::json::parse(fixed.output)["ranked"]) {
    EXPECT_EQ(candidate["microbatches"], 2);
  }
  const auto tight = run_command(tune_command(dir, " --set schedule.memory_limit_mb=0.001"));
  EXPECT_NE(tight.exit_code, 0);
  EXPECT_THAT(tight.output, HasSubstr("no plan fits schedule.memory_limit_mb"));
  // `baton plan --costs` takes the profile: per-stage costs and memory, cut as tune cuts.
  const auto planned = run_command(kBaton +
                                   " plan --schedule 1f1b --ranks 2 --microbatches 4 "
                                   "--costs '" +
                                   dir + "/baton/profile.json'");
  ASSERT_EQ(planned.exit_code, 0) << planned.output;
  EXPECT_THAT(planned.output, HasSubstr("costs: profile " + dir +
                                        "/baton/profile.json (mlp, "
                                        "microbatches of 2, cuts ["));
  EXPECT_THAT(planned.output, testing::ContainsRegex("rank 0: idle [0-9.]+, bubble [0-9.]+%, "
                                                     "peak activations 2 \\(peak memory "));
  EXPECT_THAT(planned.output, HasSubstr("parameters hold 16 bytes each (weights, float32 "
                                        "gradients, AdamW's moments)"));
  // With bf16 weights a stage holds Megatron's 18 bytes per parameter; bf16 all-reduces say so.
  const auto bf16 = run_command(kBaton +
                                " plan --schedule 1f1b --ranks 2 --microbatches 4 --params bf16 "
                                "--reduce bf16 --data-parallel 2 --costs '" +
                                dir + "/baton/profile.json'");
  ASSERT_EQ(bf16.exit_code, 0) << bf16.output;
  EXPECT_THAT(bf16.output, HasSubstr("parameters hold 18 bytes each (weights, float32 gradients, "
                                     "AdamW's moments, bf16 weights next to float32 masters), "
                                     "all-reduced in bf16"));
  // A truncated profile is named and measured again.
  {
    std::ofstream damage(dir + "/baton/profile.json", std::ios::trunc);
    damage << "{\"format\": \"baton-profile-7\", \"sizes\": [";
  }
  const auto damaged = run_command(tune_command(dir, ""));
  ASSERT_EQ(damaged.exit_code, 0) << damaged.output;
  EXPECT_THAT(damaged.output, HasSubstr("not a whole JSON document"));
  {
    std::ofstream damage(dir + "/baton/profile.json", std::ios::trunc);
    damage << "{\"format\": \"baton-profile-7\", \"sizes\": [";
  }
  const auto refused = run_command(kBaton +
                                   " plan --schedule 1f1b --ranks 2 --microbatches 4 "
                                   "--costs '" +
                                   dir + "/baton/profile.json'");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("not a whole JSON document"));
}

// The profile measures the units as the run computes them: under bf16 autocast a unit's
// outputs are bf16 (half the bytes to send), bf16 parameters count their float32 masters for
// the optimizer and the gradients, and wire: bf16 halves what a float32 model sends. Each is
// another fingerprint: a profile of another precision is measured again.
TEST(CliTune, TheProfileMeasuresTheRunsPrecision) {
  const std::string dir = testing::TempDir() + "/tune-cli-precision";
  run_command("rm -rf '" + dir + "'");
  // unit -> (output bytes, parameter bytes) at the largest microbatch size.
  const auto measured = [&](const std::string& precision) {
    const auto run = run_command(tune_command(dir, precision + " --top 1"));
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_THAT(run.output, HasSubstr("profile: measured and written to")) << precision;
    std::ifstream written(dir + "/baton/profile.json");
    const nlohmann::json profile = nlohmann::json::parse(written, nullptr, false);
    std::vector<std::pair<double, double>> units;
    if (!profile.is_object() || profile["sizes"].empty()) return units;
    for (const auto& unit : profile["sizes"][0]["units"]) {
      units.emplace_back(unit["output_bytes"].get<double>(), unit["parameter_bytes"].get<double>());
    }
    return units;
  };
  const auto fp32 = measured("");
  const auto autocast = measured(" --set precision.compute=bf16");
  const auto weights = measured(" --set precision.compute=bf16 --set precision.params=bf16");
  const auto wire = measured(" --set precision.wire=bf16");
  ASSERT_EQ(fp32.size(), 6u);  // input, layers.0..3, head
  ASSERT_EQ(autocast.size(), fp32.size());
  ASSERT_EQ(weights.size(), fp32.size());
  ASSERT_EQ(wire.size(), fp32.size());
  for (std::size_t unit = 0; unit < fp32.size(); ++unit) {
    SCOPED_TRACE("unit " + std::to_string(unit));
    EXPECT_GT(fp32[unit].first, 0.0);
    EXPECT_EQ(autocast[unit].first, fp32[unit].first / 2);
    EXPECT_EQ(weights[unit].first, fp32[unit].first / 2);
    EXPECT_EQ(wire[unit].first, fp32[unit].first / 2);
    EXPECT_EQ(autocast[unit].second, fp32[unit].second);
    EXPECT_EQ(weights[unit].second, fp32[unit].second);  // the float32 masters
  }
}

}  // namespace
