// Who this process is in the run: rank, world size, and where the rendezvous store lives,
// read from the environment of whatever launched it — baton's own launcher, torchrun,
// Slurm or Open MPI — or a single rank when nothing says otherwise.
#pragma once

#include <cstdint>
#include <string>

#include "baton/config.h"
#include "baton/params.h"
#include "baton/setting.h"
#include "baton/topology.h"

namespace baton_app {

struct WorldInfo {
  int rank = 0;
  int world_size = 1;
  int local_world_size = 1;       // ranks on this machine (threads per rank are shared out by it)
  int local_rank = 0;             // this rank among them: its GPU with world.device: cuda
  std::string launcher = "none";  // "baton", "torchrun", "slurm", "openmpi", "none"
  std::string store_address;      // empty: from the configuration
  int store_port = -1;            // -1: from the configuration
  bool store_hosted_by_launcher = false;
  std::string run_id;  // empty: derived from the configuration
  // The secret every rank presents to the store (BATON_STORE_TOKEN); empty: the run id.
  std::string store_token;
  // The layout (world.data_parallel, docs/runtime.md): `replicas` copies of a pipeline of
  // `pipeline_ranks` ranks, one pipeline's ranks adjacent, so rank = replica x pipeline_ranks
  // + pipeline_rank. One replica of the whole world until with_data_parallel() says more.
  int replicas = 1;
  int replica = 0;
  int pipeline_ranks = 1;
  int pipeline_rank = 0;

  baton::Topology topology() const { return {replicas, pipeline_ranks}; }
  // The transport rank of `pipeline_rank` in this rank's replica.
  int rank_in_replica(int pipeline_rank_in) const {
    return topology().rank(replica, pipeline_rank_in);
  }
};

// What the configuration says of the world a rank is in: the ranks it expects, how a rank logs,
// its threads and device, and the gradient buckets between replicas (read on their own before
// the front door, and with the run's settings, run_settings.h).
enum class DeviceKind { kCpu, kCuda };  // world.device

struct WorldSettings {
  baton::Setting<int> ranks;          // world.ranks, compared with what a launcher started
  int data_parallel = 1;              // world.data_parallel
  std::string log_level;              // run.log_level; empty: BATON_LOG_LEVEL stays in force
  baton::Setting<int> threads;        // run.threads, 0: automatic (rank_compute.h)
  baton::Setting<DeviceKind> device;  // world.device (rank_device.h)
  std::int64_t bucket_bytes = 0;      // world.bucket_mb: gradients all-reduced together
};

// `world` laid out as `replicas` pipelines (world_size must be a multiple; the configuration
// checks it).
WorldInfo with_data_parallel(WorldInfo world, int replicas);

// Names of the variables baton's launcher sets for its ranks.
extern const char* const kLaunchRank;
extern const char* const kLaunchWorldSize;
extern const char* const kLaunchStoreAddress;
extern const char* const kLaunchStorePort;
extern const char* const kLaunchRunId;
extern const char* const kStoreToken;  // any launcher may set it
extern const char* const kLaunchPid;   // the launcher's process id

// Throws baton::ConfigError naming the variable when one is malformed.
WorldInfo world_from_environment();

// The world section (and run.log_level, run.threads) of a configuration; read before its front
// door, so that a rank logs as itself and checks its world before anything else.
WorldSettings read_world_settings(const baton::Config& config);

// Throws ConfigError when a launcher started another number of ranks than world.ranks.
void check_world_size(const WorldSettings& settings, const WorldInfo& world);

// run.log_level was checked with the configuration; empty leaves BATON_LOG_LEVEL in force.
void set_up_logging(const WorldSettings& settings, const WorldInfo& world);

}  // namespace baton_app
