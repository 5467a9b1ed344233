// Which rank a process is, read from whatever launched it: its local rank among the ranks on
// its machine decides its GPU with world.device: cuda (rank_device.h), for every launcher.
#include "training/world_info.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

// Sets the variables for the test's length and takes them away after.
class Environment {
 public:
  explicit Environment(std::vector<std::pair<std::string, std::string>> variables)
      : variables_(std::move(variables)) {
    for (const auto& [name, value] : variables_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~Environment() {
    for (const auto& [name, value] : variables_) ::unsetenv(name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> variables_;
};

TEST(WorldEnvironment, EveryLauncherSaysTheLocalRank) {
  {
    const Environment torchrun(
        {{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}});
    const auto world = baton_app::world_from_environment();
    EXPECT_EQ(world.launcher, "torchrun");
    EXPECT_EQ(world.local_rank, 1);
    EXPECT_EQ(world.local_world_size, 4);
  }
  {
    const Environment slurm({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "1"}});
    const auto world = baton_app::world_from_environment();
    EXPECT_EQ(world.launcher, "slurm");
    EXPECT_EQ(world.local_rank, 1);
  }
  {
    const Environment openmpi({{"OMPI_COMM_WORLD_RANK", "2"},
                               {"OMPI_COMM_WORLD_SIZE", "4"},
                               {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                               {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
    const auto world = baton_app::world_from_environment();
    EXPECT_EQ(world.launcher, "openmpi");
    EXPECT_EQ(world.local_rank, 0);
  }
  {
    // baton launch starts every rank on this machine: the local rank is the rank.
    const Environment launched({{baton_app::kLaunchRank, "1"}, {baton_app::kLaunchWorldSize, "2"}});
    const auto world = baton_app::world_from_environment();
    EXPECT_EQ(world.launcher, "baton");
    EXPECT_EQ(world.local_rank, 1);
  }
  EXPECT_EQ(baton_app::world_from_environment().local_rank, 0);  // no launcher: one rank
}

}  // namespace
