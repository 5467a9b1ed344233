// Ranks started by launchers other than `baton launch` (docs/launching.md): torchrun's and
// Slurm's environments give each process its rank and world, and what the ranks train is what
// plain PyTorch trains. A rank that never arrives is named at rendezvous, with what to check.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "free_port.h"
#include "launch_run.h"
#include "read_text.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;

const std::vector<std::string> kRun = {
    "model.name=mlp",        "model.params.in_features=8",  "model.params.hidden=16",
    "model.params.layers=3", "model.params.out_features=3", "data.source=synthetic",
    "data.batch_size=8",     "schedule.name=1f1b",          "schedule.microbatches=4",
    "optimizer.name=sgd",    "optimizer.lr=0.05",           "optimizer.momentum=0.5",
    "run.steps=3",           "checkpoint.enabled=false",    "trace.enabled=false"};

using baton_test::read_text;

// Starts one `baton run` per entry of `environments` (each "VAR=value VAR=value"), all at
// once, with `settings`, dumps into `dir`/dumps; waits for all (a hang guard of 120 s) and
// returns "exit <code>" per rank, in order. Rank r's output is in `dir`/rank<r>.out.
std::string run_ranks(const std::string& dir, const std::vector<std::string>& environments,
                      const std::vector<std::string>& settings) {
  std::string command = "rm -rf '" + dir + "' && mkdir -p '" + dir + "' && (";
  for (std::size_t r = 0; r < environments.size(); ++r) {
    command += "env " + environments[r] + " timeout -k 5 120 '" + BATON_BINARY +
               "' run --no-env --dump-dir '" + dir + "/dumps' --set run.output_dir='" + dir +
               "/runs'";
    for (const auto& setting : settings) command += " --set '" + setting + "'";
    command += " > '" + dir + "/rank" + std::to_string(r) + ".out' 2>&1 & pid" + std::to_string(r) +
               "=$!; ";
  }
  for (std::size_t r = 0; r < environments.size(); ++r) {
    command += "wait $pid" + std::to_string(r) + "; echo \"exit $?\"; ";
  }
  command += ")";
  return baton_test::run_command(command).output;
}

// Two ranks in `environments` both finish, rank 0 says which launcher started it, and their
// dumps equal plain PyTorch's training.
void expect_two_ranks_like_torch(const std::string& dir, const std::string& launcher,
                                 const std::vector<std::string>& environments,
                                 const std::vector<std::string>& settings) {
  const std::string exits = run_ranks(dir, environments, settings);
  ASSERT_EQ(exits, "exit 0\nexit 0\n")
      << read_text(dir + "/rank0.out") << read_text(dir + "/rank1.out");
  EXPECT_THAT(read_text(dir + "/rank0.out"), HasSubstr("(2 ranks, launcher " + launcher + ")"));
  const auto reference = baton_test::compare_dumps_with_torch(dir + "/dumps", 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

TEST(OtherLaunchers, TorchrunsEnvironmentTrainsLikePlainPyTorch) {
  const std::string dir = ::testing::TempDir() + "/torchrun-env";
  const std::string world = "WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                            std::to_string(baton_test::unused_loopback_port());
  expect_two_ranks_like_torch(dir, "torchrun", {"RANK=0 " + world, "RANK=1 " + world}, kRun);
}

// Slurm names the rank and the world (SLURM_PROCID, SLURM_NTASKS); the store's address and
// port come from the configuration, as they would in an sbatch script.
TEST(OtherLaunchers, SlurmsEnvironmentTrainsLikePlainPyTorch) {
  const std::string dir = ::testing::TempDir() + "/slurm-env";
  std::vector<std::string> settings = kRun;
  settings.push_back("world.address=127.0.0.1");
  settings.push_back("world.port=" + std::to_string(baton_test::unused_loopback_port()));
  const std::string world = "SLURM_NTASKS=2 SLURM_NTASKS_PER_NODE=2 SLURM_JOB_ID=4242";
  expect_two_ranks_like_torch(dir, "slurm", {"SLURM_PROCID=0 " + world, "SLURM_PROCID=1 " + world},
                              settings);
}

// Rank 1 is never started: rank 0 says, once world.timeout_s has passed, that rank 1 never
// arrived at rendezvous and what to check — not a key the transport waited for.
TEST(OtherLaunchers, ARankThatNeverArrivesIsNamedAtRendezvous) {
  const std::string dir = ::testing::TempDir() + "/missing-rank";
  std::vector<std::string> settings = kRun;
  settings.push_back("world.timeout_s=2");
  settings.push_back("world.ranks=3");
  const std::string exits =
      run_ranks(dir,
                {"RANK=0 WORLD_SIZE=3 LOCAL_WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                 std::to_string(baton_test::unused_loopback_port())},
                settings);
  const std::string out = read_text(dir + "/rank0.out");
  EXPECT_EQ(exits, "exit 1\n") << out;
  EXPECT_THAT(out, HasSubstr("rank 0: rendezvous: 1 of 3 ranks arrived at the tcp store at "
                             "127.0.0.1:"));
  EXPECT_THAT(out, HasSubstr("within 2 s (world.timeout_s); ranks 1, 2 never did. Start every "
                             "rank with the same world settings"));
  EXPECT_THAT(out, testing::Not(HasSubstr("was not set within")));
}

}  // namespace
