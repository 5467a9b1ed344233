// schedule.name: auto in a real launch (docs/auto.md): rank 0 measures the model and
// chooses, every rank runs the choice — which trains like plain PyTorch, with the same losses
// as that schedule, stages per rank, microbatch count and cuts configured by hand — and
// --resume keeps the choice.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "launch_run.h"
#include "torch_reference.h"
#include "training/checkpoint.h"

namespace {

using testing::HasSubstr;

const std::vector<std::string> kModel = {
    "model.name=mlp",        "model.params.in_features=8",  "model.params.hidden=16",
    "model.params.layers=4", "model.params.out_features=3", "data.source=synthetic",
    "data.batch_size=8",     "trace.enabled=false",         "run.name=auto"};

std::vector<std::string> with(std::vector<std::string> settings,
                              const std::vector<std::string>& more) {
  settings.insert(settings.end(), more.begin(), more.end());
  return settings;
}

// "loss 1.09861 -> 1.08" from "done: 3 steps in 0:00, loss 1.09861 -> 1.08; metrics: …".
// (Not std::regex: GCC 12 warns inside <regex> under the sanitizer build, and warnings fail it.)
std::string losses_of(const std::string& output) {
  const std::size_t done = output.find("done: ");
  const std::size_t start = done == std::string::npos ? done : output.find("loss ", done);
  if (start == std::string::npos) return "";
  const std::size_t end = output.find_first_of(";\n", start);
  return output.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(AutoSchedule, EveryRankRunsRankZerosChoiceAndResumeKeepsIt) {
  const std::string root = ::testing::TempDir() + "/auto-schedule";
  std::filesystem::remove_all(root);
  const auto auto_settings =
      with(kModel, {"schedule.name=auto", "run.steps=3", "run.output_dir=" + root});
  const auto chosen_run = baton_test::launch(BATON_BINARY, 2, auto_settings, "auto");
  ASSERT_EQ(chosen_run.command.exit_code, 0) << chosen_run.command.output;
  // Whatever it chose trains what plain PyTorch trains.
  const auto reference = baton_test::compare_with_torch(chosen_run, 2, auto_settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("comparisons match"));
  const std::string& out = chosen_run.command.output;
  EXPECT_THAT(out, HasSubstr("[rank 0] schedule: auto: measured the model into " + root +
                             "/auto/profile.json"));
  EXPECT_THAT(out, HasSubstr("[rank 0] chosen: "));
  EXPECT_THAT(out, testing::Not(HasSubstr("[rank 1] schedule: auto")));  // rank 0 decides

  std::ifstream file(root + "/auto/schedule_choice.json");
  ASSERT_TRUE(file) << "no schedule_choice.json";
  std::stringstream text;
  text << file.rdbuf();
  const nlohmann::json choice = nlohmann::json::parse(text.str());
  // The checkpoint carries the choice, and the profile the transport's measured costs.
  const std::string checkpoint = baton_app::latest_checkpoint(root + "/auto/checkpoints");
  ASSERT_FALSE(checkpoint.empty());
  EXPECT_EQ(nlohmann::json::parse(baton_app::schedule_choice_in(checkpoint)), choice);
  std::ifstream profile_file(root + "/auto/profile.json");
  const nlohmann::json profile = nlohmann::json::parse(profile_file);
  EXPECT_THAT(profile["transfer"]["source"].get<std::string>(),
              testing::StartsWith("measured: gloo between two ranks"));
  EXPECT_GT(profile["transfer"]["latency_s"].get<double>(), 0);
  std::string cuts;
  const auto bounds = choice["bounds"].get<std::vector<int>>();
  for (std::size_t s = 1; s + 1 < bounds.size(); ++s) {
    cuts += (cuts.empty() ? "" : ",") + std::to_string(bounds[s]);
  }
  // The same candidate configured by hand gives the same losses: the choice is a plan the
  // user could have written.
  const auto by_hand = baton_test::launch(
      BATON_BINARY, 2,
      with(kModel,
           {"schedule.name=" + choice["schedule"].get<std::string>(),
            "schedule.stages_per_rank=" + std::to_string(choice["stages_per_rank"].get<int>()),
            "schedule.microbatches=" + std::to_string(choice["microbatches"].get<int>()),
            "model.cuts=[" + cuts + "]", "run.steps=3", "run.output_dir=" + root + "/by-hand"}),
      "auto-by-hand");
  ASSERT_EQ(by_hand.command.exit_code, 0) << by_hand.command.output;
  EXPECT_FALSE(losses_of(out).empty()) << out;
  EXPECT_EQ(losses_of(out), losses_of(by_hand.command.output));

  // --resume keeps the choice (it does not measure again) and continues.
  const auto resumed = baton_test::launch(
      BATON_BINARY, 2,
      with(kModel, {"schedule.name=auto", "run.steps=5", "run.output_dir=" + root}), "auto-resumed",
      180, /*extra=*/"--resume");
  ASSERT_EQ(resumed.command.exit_code, 0) << resumed.command.output;
  EXPECT_THAT(resumed.command.output, HasSubstr("schedule: auto: keeping the choice in " + root +
                                                "/auto/schedule_choice.json (--resume)"));
  EXPECT_THAT(resumed.command.output, HasSubstr("resuming after step 3"));

  // Without the run folder's file, the newest checkpoint's manifest still says what ran.
  std::filesystem::remove(root + "/auto/schedule_choice.json");
  const auto from_manifest = baton_test::launch(
      BATON_BINARY, 2,
      with(kModel, {"schedule.name=auto", "run.steps=6", "run.output_dir=" + root}),
      "auto-from-manifest", 180, /*extra=*/"--resume");
  ASSERT_EQ(from_manifest.command.exit_code, 0) << from_manifest.command.output;
  EXPECT_THAT(from_manifest.command.output,
              HasSubstr("schedule: auto: keeping the choice recorded in " + root +
                        "/auto/checkpoints/step-000005/manifest.json (--resume)"));
  EXPECT_THAT(from_manifest.command.output, HasSubstr("resuming after step 5"));
}

}  // namespace
