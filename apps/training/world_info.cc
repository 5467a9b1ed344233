#include "world_info.h"

#include <algorithm>
#include <cstdlib>

#include "baton/error.h"
#include "baton/log.h"

namespace baton_app {

const char* const kLaunchRank = "BATON_LAUNCH_RANK";
const char* const kLaunchWorldSize = "BATON_LAUNCH_WORLD_SIZE";
const char* const kLaunchStoreAddress = "BATON_LAUNCH_STORE_ADDRESS";
const char* const kLaunchStorePort = "BATON_LAUNCH_STORE_PORT";
const char* const kLaunchRunId = "BATON_LAUNCH_RUN_ID";
const char* const kStoreToken = "BATON_STORE_TOKEN";
const char* const kLaunchPid = "BATON_LAUNCH_PID";

namespace {

const char* get(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

int integer(const char* name, int minimum) {
  const char* text = get(name);
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < minimum || value > 1000000) {
    throw baton::ConfigError("environment variable " + std::string(name) + "='" + text +
                             "' is not an integer >= " + std::to_string(minimum));
  }
  return static_cast<int>(value);
}

void check_rank(const WorldInfo& world, const char* rank_name) {
  if (world.rank >= world.world_size) {
    throw baton::ConfigError(std::string(rank_name) + "=" + std::to_string(world.rank) +
                             " is outside a world of " + std::to_string(world.world_size) +
                             " ranks");
  }
}

}  // namespace

WorldInfo with_data_parallel(WorldInfo world, int replicas) {
  if (replicas < 1 || world.world_size % replicas != 0) {
    throw baton::ConfigError("world.data_parallel " + std::to_string(replicas) +
                             " does not divide the " + std::to_string(world.world_size) +
                             " ranks into pipelines of equal size");
  }
  world.replicas = replicas;
  world.pipeline_ranks = world.world_size / replicas;
  world.replica = world.topology().replica_of(world.rank);
  world.pipeline_rank = world.topology().pipeline_rank_of(world.rank);
  return world;
}

WorldInfo world_from_environment() {
  WorldInfo world;
  if (get(kLaunchRank)) {
    world.launcher = "baton";
    world.rank = integer(kLaunchRank, 0);
    world.world_size = integer(kLaunchWorldSize, 1);
    if (get(kLaunchStoreAddress)) world.store_address = get(kLaunchStoreAddress);
    if (get(kLaunchStorePort)) world.store_port = integer(kLaunchStorePort, 1);
    world.store_hosted_by_launcher = true;
    world.local_world_size = world.world_size;  // baton launch starts every rank here
    world.local_rank = world.rank;
    if (get(kLaunchRunId)) world.run_id = get(kLaunchRunId);
    check_rank(world, kLaunchRank);
  } else if (get("RANK") && get("WORLD_SIZE")) {
    world.launcher = "torchrun";
    world.rank = integer("RANK", 0);
    world.world_size = integer("WORLD_SIZE", 1);
    if (get("MASTER_ADDR")) world.store_address = get("MASTER_ADDR");
    if (get("MASTER_PORT")) world.store_port = integer("MASTER_PORT", 1);
    if (get("TORCHELASTIC_RUN_ID")) world.run_id = get("TORCHELASTIC_RUN_ID");
    if (get("LOCAL_WORLD_SIZE")) world.local_world_size = integer("LOCAL_WORLD_SIZE", 1);
    if (get("LOCAL_RANK")) world.local_rank = integer("LOCAL_RANK", 0);
    check_rank(world, "RANK");
  } else if (get("SLURM_PROCID") && get("SLURM_NTASKS")) {
    world.launcher = "slurm";
    world.rank = integer("SLURM_PROCID", 0);
    world.world_size = integer("SLURM_NTASKS", 1);
    if (get("SLURM_JOB_ID")) world.run_id = std::string("slurm-") + get("SLURM_JOB_ID");
    // SLURM_NTASKS_PER_NODE may read "2(x3)"; the leading count is this node's.
    if (get("SLURM_NTASKS_PER_NODE")) {
      world.local_world_size = std::max(1, std::atoi(get("SLURM_NTASKS_PER_NODE")));
    }
    if (get("SLURM_LOCALID")) world.local_rank = integer("SLURM_LOCALID", 0);
    check_rank(world, "SLURM_PROCID");
  } else if (get("OMPI_COMM_WORLD_RANK") && get("OMPI_COMM_WORLD_SIZE")) {
    world.launcher = "openmpi";
    world.rank = integer("OMPI_COMM_WORLD_RANK", 0);
    world.world_size = integer("OMPI_COMM_WORLD_SIZE", 1);
    if (get("OMPI_COMM_WORLD_LOCAL_SIZE")) {
      world.local_world_size = integer("OMPI_COMM_WORLD_LOCAL_SIZE", 1);
    }
    if (get("OMPI_COMM_WORLD_LOCAL_RANK")) {
      world.local_rank = integer("OMPI_COMM_WORLD_LOCAL_RANK", 0);
    }
    check_rank(world, "OMPI_COMM_WORLD_RANK");
  }
  if (get(kStoreToken)) world.store_token = get(kStoreToken);
  return with_data_parallel(world, 1);
}

WorldSettings read_world_settings(const baton::Config& config) {
  const baton::ParamValues& world = config.section("world");
  const baton::ParamValues& run = config.section("run");
  WorldSettings settings;
  settings.ranks = baton::read_setting<int>(world, "ranks");
  settings.data_parallel = static_cast<int>(world.get_int("data_parallel"));
  settings.log_level = run.get_string("log_level");
  settings.threads = baton::read_setting<int>(run, "threads");
  settings.device = baton::read_choice<DeviceKind>(
      world, "device", {{"cpu", DeviceKind::kCpu}, {"cuda", DeviceKind::kCuda}});
  settings.bucket_bytes =
      static_cast<std::int64_t>(world.get_float("bucket_mb") * static_cast<double>(1 << 20));
  return settings;
}

void check_world_size(const WorldSettings& settings, const WorldInfo& world) {
  const baton::Setting<int>& ranks = settings.ranks;
  if (world.launcher != "none" && ranks.value != world.world_size) {
    throw baton::ConfigError(ranks.where() + ": world.ranks is " + std::to_string(ranks.value) +
                             " but the " + world.launcher + " launcher started " +
                             std::to_string(world.world_size) +
                             " ranks; set world.ranks to match (or --set world.ranks=" +
                             std::to_string(world.world_size) + ")");
  }
}

void set_up_logging(const WorldSettings& settings, const WorldInfo& world) {
  baton::set_log_prefix("rank " + std::to_string(world.rank));
  baton::LogLevel level;
  if (baton::parse_log_level(settings.log_level, &level)) {
    baton::set_log_level(level);
  }
}

}  // namespace baton_app
