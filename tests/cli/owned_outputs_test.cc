// Every place a command writes what its command line names writes only over what it made
// (owned_outputs.h): `tune --profile` never over a user's YAML, `--dump-dir` never into a
// checkpoint nor over files it did not write, and an unwritable dump folder is found before
// training. (`export --out`: Checkpoint.ExportWritesOnlyFilesItMakes; baton-split --out:
// YourModel.BatonSplitOwnsItsOutFolder; checkpoint.dir: RunFolder.*.)
#include "owned_outputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "baton/error.h"
#include "run_command.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;

std::string fresh_folder(const std::string& name) {
  const std::string folder = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

std::string text_of(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::string error_of(const std::function<void()>& act) {
  try {
    act();
  } catch (const baton::ConfigError& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(OwnedOutputs, AFileIsWrittenOnlyWhereNothingIsOrWhatBatonMadeIs) {
  const std::string folder = fresh_folder("owned-file");
  const auto ours = [](const std::string& path) { return text_of(path) == "made by baton"; };
  baton_app::check_output_file(folder + "/new.pt", "--out", "an export", ours);
  std::ofstream(folder + "/earlier.pt") << "made by baton";
  baton_app::check_output_file(folder + "/earlier.pt", "--out", "an export", ours);
  std::ofstream(folder + "/photos.zip") << "PK user's";
  EXPECT_THAT(error_of([&] {
                baton_app::check_output_file(folder + "/photos.zip", "--out", "an export", ours);
              }),
              HasSubstr("--out '" + folder +
                        "/photos.zip' exists and is not an export baton wrote: baton does not "
                        "write over a file it did not make"));
  EXPECT_THAT(error_of([&] { baton_app::check_output_file(folder, "--out", "an export", ours); }),
              HasSubstr("exists and is a directory"));
  std::filesystem::create_directories(folder + "/step-000004");
  std::ofstream(folder + "/step-000004/manifest.json") << "{}";
  EXPECT_THAT(error_of([&] {
                baton_app::check_output_file(folder + "/step-000004/model.pt", "--out", "an export",
                                             ours);
              }),
              HasSubstr("is inside a checkpoint"));
}

TEST(OwnedOutputs, AFolderIsFilledOnlyWhenItsFilesWouldReplaceNothingOfSomeoneElses) {
  const std::string folder = fresh_folder("owned-folder");
  const auto rank_file = [](const std::string& name) { return name.rfind("rank", 0) == 0; };
  // A folder with other files (a test's configs, a run's folder) is fine; it is marked.
  std::ofstream(folder + "/notes.txt") << "x";
  baton_app::claim_output_folder(folder, "--dump-dir", ".baton-dump", rank_file);
  EXPECT_TRUE(std::filesystem::exists(folder + "/.baton-dump"));
  // Marked: its own earlier files may be replaced.
  std::ofstream(folder + "/rank0.pt") << "earlier dump";
  baton_app::claim_output_folder(folder, "--dump-dir", ".baton-dump", rank_file);

  const std::string other = fresh_folder("owned-folder-other");
  std::ofstream(other + "/rank0.pt") << "someone's";
  EXPECT_THAT(
      error_of(
          [&] { baton_app::claim_output_folder(other, "--dump-dir", ".baton-dump", rank_file); }),
      HasSubstr("--dump-dir '" + other + "' holds rank0.pt, which baton did not write there"));
  EXPECT_FALSE(std::filesystem::exists(other + "/.baton-dump"));
  EXPECT_THAT(error_of([&] {
                baton_app::claim_output_folder("/proc/baton-cannot-write-here", "--dump-dir",
                                               ".baton-dump", rank_file);
              }),
              HasSubstr("/proc/baton-cannot-write-here"));
}

std::string run_line(const std::string& folder, const std::string& extra) {
  return "timeout -k 5 120 " + kBaton +
         " run --no-env --set world.ranks=1 --set model.name=mlp --set model.params.layers=2"
         " --set model.params.hidden=16 --set data.source=synthetic --set data.batch_size=8"
         " --set run.steps=1 --set trace.enabled=false --set run.output_dir='" +
         folder + "/runs' " + extra;
}

// Issue 48: --dump-dir into another run's checkpoint replaced its rank*.pt (export then fell
// back to an older step); --dump-dir /proc/x failed only after training.
TEST(OwnedOutputs, ADumpIntoACheckpointOrAnUnwritableFolderIsRefusedBeforeTraining) {
  const std::string folder = fresh_folder("owned-dump");
  const std::string checkpoint = folder + "/step-000002";
  std::filesystem::create_directories(checkpoint);
  std::ofstream(checkpoint + "/manifest.json") << "{}";
  std::ofstream(checkpoint + "/rank0.pt") << "the checkpoint's";
  const auto into_checkpoint =
      baton_test::run_command(run_line(folder, "--dump-dir '" + checkpoint + "'"));
  EXPECT_NE(into_checkpoint.exit_code, 0) << into_checkpoint.output;
  EXPECT_THAT(into_checkpoint.output,
              HasSubstr("--dump-dir '" + checkpoint + "' is inside a checkpoint"));
  EXPECT_THAT(into_checkpoint.output, testing::Not(HasSubstr("step 1/1")));
  EXPECT_EQ(text_of(checkpoint + "/rank0.pt"), "the checkpoint's");

  const auto unwritable = baton_test::run_command(run_line(folder, "--dump-dir /proc/baton-dump"));
  EXPECT_NE(unwritable.exit_code, 0) << unwritable.output;
  EXPECT_THAT(unwritable.output, HasSubstr("/proc/baton-dump"));
  EXPECT_THAT(unwritable.output, testing::Not(HasSubstr("step 1/1")));

  const auto dumped = baton_test::run_command(run_line(folder, "--dump-dir '" + folder + "/dump'"));
  ASSERT_EQ(dumped.exit_code, 0) << dumped.output;
  EXPECT_TRUE(std::filesystem::exists(folder + "/dump/rank0.pt"));
  const auto again =
      baton_test::run_command(run_line(folder, "--overwrite --dump-dir '" + folder + "/dump'"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

// Issue 48: `baton tune --profile FILE` wrote the profile over a user's YAML.
TEST(OwnedOutputs, TuneNeverWritesAProfileOverAUsersFile) {
  const std::string folder = fresh_folder("owned-profile");
  const std::string users = folder + "/my-config.yaml";
  std::ofstream(users) << "run:\n  steps: 3\n";
  const auto tuned = baton_test::run_command(
      "timeout -k 5 120 " + kBaton +
      " tune --no-env --set model.name=mlp --set model.params.layers=2"
      " --set model.params.hidden=16 --set data.source=synthetic --set data.batch_size=8"
      " --set schedule.name=auto --set run.output_dir='" +
      folder + "/runs' --profile '" + users + "'");
  EXPECT_NE(tuned.exit_code, 0) << tuned.output;
  EXPECT_THAT(tuned.output,
              HasSubstr("profile '" + users + "' exists and is not a profile baton wrote"));
  EXPECT_EQ(text_of(users), "run:\n  steps: 3\n");
}

}  // namespace
