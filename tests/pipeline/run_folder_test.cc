// A run folder belongs to one run: a second launch into a busy folder is refused naming the
// process that holds it; a fresh run over an earlier run's checkpoints is refused unless the
// user says --resume or --overwrite (which moves the earlier run aside and says so); a
// checkpoint folder that cannot be written is found before training, not at the first
// checkpoint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "run_command.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;

std::string launch_line(const std::string& output_dir, int steps, const std::string& extra = "") {
  return "timeout -k 5 120 " + kBaton + " launch -n 2 --no-env --set model.name=mlp" +
         " --set model.params.layers=2 --set model.params.hidden=16 --set data.source=synthetic" +
         " --set data.batch_size=8 --set trace.enabled=false --set world.timeout_s=30" +
         " --set run.steps=" + std::to_string(steps) + " --set run.output_dir=" + output_dir + " " +
         extra;
}

TEST(RunFolder, ASecondLaunchIntoABusyFolderIsRefusedNamingTheHolder) {
  const std::string root = ::testing::TempDir() + "/run-folder-busy";
  baton_test::run_command("rm -rf '" + root + "' && mkdir -p '" + root + "'");
  // The first run trains long enough to be caught in the act; it is stopped at the end.
  const std::string first_log = root + "/first.log";
  baton_test::run_command("(" + launch_line(root, 1000000, "--set run.log_every=100000") + " > '" +
                          first_log + "' 2>&1 &)");
  // Wait until it trains: its lock is taken before anything else (90 s: a hang guard).
  for (int i = 0; i < 900; ++i) {
    if (baton_test::run_command("grep -q 'step 1/' '" + first_log + "'").exit_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto second = baton_test::run_command(launch_line(root, 2));
  baton_test::run_command("pkill -TERM -f 'run.output_dir=" + root + " ' ; sleep 1");
  EXPECT_NE(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("run folder '" + root +
                                       "/baton' is in use by another run "
                                       "(process "));
  EXPECT_THAT(second.output, HasSubstr("holds " + root + "/.baton.lock)"));
  EXPECT_THAT(second.output, testing::Not(HasSubstr("all 2 ranks finished")));
}

TEST(RunFolder, AFreshRunOverCheckpointsIsRefusedUnlessResumeOrOverwrite) {
  const std::string root = ::testing::TempDir() + "/run-folder-fresh";
  baton_test::run_command("rm -rf '" + root + "'");
  const auto first = baton_test::run_command(launch_line(root, 4, "--set checkpoint.every=2"));
  ASSERT_EQ(first.exit_code, 0) << first.output;

  // A fresh run with other settings would overwrite metrics.jsonl and poison a later resume.
  const auto fresh = baton_test::run_command(launch_line(root, 2, "--set run.seed=7"));
  EXPECT_NE(fresh.exit_code, 0) << fresh.output;
  EXPECT_THAT(fresh.output, HasSubstr("run folder '" + root +
                                      "/baton' holds checkpoints of an earlier run "
                                      "(newest: " +
                                      root +
                                      "/baton/checkpoints/step-000004); --resume "
                                      "continues that run, --overwrite moves it aside"));
  EXPECT_TRUE(std::filesystem::exists(root + "/baton/checkpoints/step-000004/manifest.json"));

  const auto both = baton_test::run_command(launch_line(root, 2, "--resume --overwrite"));
  EXPECT_NE(both.exit_code, 0) << both.output;
  EXPECT_THAT(both.output, HasSubstr("give one"));

  // --overwrite: the earlier run is moved aside, whole, and the new one starts at step 1.
  const auto overwritten =
      baton_test::run_command(launch_line(root, 2, "--set run.seed=7 --overwrite"));
  ASSERT_EQ(overwritten.exit_code, 0) << overwritten.output;
  EXPECT_THAT(overwritten.output, HasSubstr("--overwrite: moved the earlier run in " + root +
                                            "/baton aside to " + root + "/baton.replaced-"));
  int aside = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("baton.replaced-", 0) == 0) {
      ++aside;
      EXPECT_TRUE(std::filesystem::exists(entry.path() / "checkpoints/step-000004/manifest.json"));
    }
  }
  EXPECT_EQ(aside, 1);
  // And --resume of the new run continues the new run, not the one moved aside.
  const auto resumed = baton_test::run_command(launch_line(root, 3, "--set run.seed=7 --resume"));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("resuming after step 2"));
}

// A checkpoint write killed half-way leaves <file>.tmp.XXXXXX (~30 MB on a real model): the
// next run in the folder removes it and says so.
TEST(RunFolder, PartialFilesOfAnInterruptedCheckpointWriteAreRemoved) {
  const std::string root = ::testing::TempDir() + "/run-folder-partial";
  baton_test::run_command("rm -rf '" + root + "'");
  const auto first = baton_test::run_command(launch_line(root, 2, "--set checkpoint.every=2"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string partial = root + "/baton/checkpoints/step-000002/rank1.optim.tmp.Ab3dEf";
  std::ofstream(partial) << std::string(1 << 20, 'x');
  // A user's file with a temporary-looking name is not baton's to remove.
  const std::string users = root + "/baton/checkpoints/step-000002/notes.tmp.abcdef";
  std::ofstream(users) << "mine";
  const auto resumed = baton_test::run_command(launch_line(root, 3, "--resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("removed 1 partial file (1 MiB) that an interrupted "
                                        "checkpoint write left in " +
                                        root + "/baton/checkpoints"));
  EXPECT_FALSE(std::filesystem::exists(partial));
  EXPECT_TRUE(std::filesystem::exists(users));
}

// Issue 48: runs 'sa' and 'sb' given one checkpoint.dir both trained (rc 0) into the same
// step-N folders, and `sb --resume` continued from sa's weights. checkpoint.dir is owned like
// the run folder: locked while a run uses it, and stamped with the run's identity, which
// --resume checks.
TEST(RunFolder, TwoRunsCannotShareACheckpointFolder) {
  const std::string root = ::testing::TempDir() + "/run-folder-shared";
  baton_test::run_command("rm -rf '" + root + "' && mkdir -p '" + root + "'");
  const std::string shared = "--set checkpoint.dir=" + root + "/shared ";
  const auto run_named = [&](const std::string& name, int steps, const std::string& extra) {
    return launch_line(root, steps, shared + "--set run.name=" + name + " " + extra);
  };
  // Together: the second is refused while the first holds the folder.
  const std::string first_log = root + "/sa.log";
  baton_test::run_command("(" + run_named("busy", 1000000, "--set run.log_every=100000") + " > '" +
                          first_log + "' 2>&1 &)");
  for (int i = 0; i < 900; ++i) {
    if (baton_test::run_command("grep -q 'step 1/' '" + first_log + "'").exit_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto together = baton_test::run_command(run_named("sb", 2, ""));
  baton_test::run_command("pkill -TERM -f 'run.name=busy' ; sleep 1");
  EXPECT_NE(together.exit_code, 0) << together.output;
  EXPECT_THAT(together.output,
              HasSubstr("checkpoint.dir '" + root + "/shared' is in use by another run (process "));
  EXPECT_THAT(together.output, HasSubstr("give each run a checkpoint.dir of its own"));
  baton_test::run_command("rm -rf '" + root + "/shared'");

  // One after the other: a fresh start is refused, and so is a resume from the other's.
  const auto sa = baton_test::run_command(run_named("sa", 4, "--set checkpoint.every=2"));
  ASSERT_EQ(sa.exit_code, 0) << sa.output;
  const auto sb = baton_test::run_command(run_named("sb", 4, "--set checkpoint.every=2"));
  EXPECT_NE(sb.exit_code, 0) << sb.output;
  EXPECT_THAT(sb.output, HasSubstr("checkpoint.dir '" + root +
                                   "/shared' holds checkpoints of an earlier run"));
  const auto sb_resumed =
      baton_test::run_command(run_named("sb", 8, "--set checkpoint.every=2 --resume"));
  EXPECT_NE(sb_resumed.exit_code, 0) << sb_resumed.output;
  EXPECT_THAT(sb_resumed.output, HasSubstr("holds step-000002 (run 'sa', id "));
  EXPECT_THAT(sb_resumed.output, HasSubstr("written by another run than this one ('sb'"));
  EXPECT_THAT(sb_resumed.output, testing::Not(HasSubstr("resuming after step")));
  // Its own run resumes.
  const auto sa_resumed =
      baton_test::run_command(run_named("sa", 6, "--set checkpoint.every=2 --resume"));
  EXPECT_EQ(sa_resumed.exit_code, 0) << sa_resumed.output;
  EXPECT_THAT(sa_resumed.output, HasSubstr("resuming after step 4"));

  // A manifest whose step was edited is not resumed from (it would skip steps 7 and 8).
  const std::string manifest = root + "/shared/step-000006/manifest.json";
  baton_test::run_command("sed -i 's/\"step\": 6/\"step\": 8/' '" + manifest + "'");
  const auto edited =
      baton_test::run_command(run_named("sa", 8, "--set checkpoint.every=2 --resume"));
  EXPECT_EQ(edited.exit_code, 0) << edited.output;
  EXPECT_THAT(edited.output, HasSubstr("says step 8, its folder is step-000006"));
  EXPECT_THAT(edited.output, HasSubstr("resuming after step 4"));

  // A resume past run.steps says there is nothing to train, with a failure.
  const auto past = baton_test::run_command(run_named("sa", 3, "--resume"));
  EXPECT_NE(past.exit_code, 0) << past.output;
  EXPECT_THAT(past.output, HasSubstr("past run.steps (3): nothing is left to train"));
}

// Balanced cuts remembered for 2 stages do not apply to a resume onto 4: measured again
// (before: "model.cuts has 1 entries; 4 stages need 3", though the user never set cuts).
TEST(RunFolder, AResumeOntoAnotherLayoutMeasuresBalancedCutsAgain) {
  const std::string root = ::testing::TempDir() + "/run-folder-cuts";
  baton_test::run_command("rm -rf '" + root + "'");
  const std::string cuts = "--set model.cuts=balanced --set model.params.layers=4 ";
  const auto first =
      baton_test::run_command(launch_line(root, 2, cuts + "--set checkpoint.every=2"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto resumed = baton_test::run_command(
      "timeout -k 5 120 " + kBaton + " launch -n 4 --no-env --set model.name=mlp" +
      " --set model.params.hidden=16 --set data.source=synthetic --set data.batch_size=8" +
      " --set trace.enabled=false --set world.timeout_s=30 --set run.steps=3" +
      " --set run.output_dir=" + root + " --set world.ranks=4 " + cuts + "--resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("balanced_cuts.txt holds the cuts of 2 stages, this run "
                                        "has 4: measuring again"));
  EXPECT_THAT(resumed.output, HasSubstr("resuming after step 2"));
}

TEST(RunFolder, AnUnwritableCheckpointFolderIsFoundBeforeTraining) {
  const std::string root = ::testing::TempDir() + "/run-folder-unwritable";
  baton_test::run_command("rm -rf '" + root + "' && mkdir -p '" + root + "'");
  // A file where a folder must be: no permission bits involved (the tests may run as root).
  std::ofstream(root + "/not-a-folder") << "x";
  const auto run = baton_test::run_command(launch_line(
      root, 150,
      "--set checkpoint.every=150 --set checkpoint.dir=" + root + "/not-a-folder/checkpoints"));
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr(root + "/not-a-folder/checkpoints"));
  EXPECT_THAT(run.output, testing::Not(HasSubstr("step 1/")));
}

}  // namespace
