// A rank's pipeline, built in one place for everything that trains one: the trainer, and
// `baton bench tune`'s rotation, which builds one per candidate over a shared transport.
// Two calls, in the order every rank follows:
//   plan_rank()            the plugins and the checked plan — known before the rank meets
//                          anyone, so a bad plan fails before any rendezvous;
//   build_rank_pipeline()  the model (identical on every rank) and its batches, this rank's
//                          stages, the transport (connected, or shared), the executor and the
//                          optimizer.
// Before them come who the rank is and its logging (world_info.h), the run's settings
// (run_settings.h), its compute threads (rank_compute.h) and the store (rank_connections.h);
// the stages it holds are cut in local_stages.h. The step loop, checkpoints and progress come
// after (trainer.h).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "batches.h"
#include "baton/config.h"
#include "baton/config_plugins.h"
#include "baton/plugin_loader.h"
#include "baton/runtime/executor.h"
#include "failure_record.h"
#include "local_stages.h"
#include "models.h"
#include "optimizer_settings.h"
#include "rank_connections.h"
#include "run_settings.h"
#include "world_info.h"

namespace torch {
namespace optim {
class Optimizer;
}
}  // namespace torch

namespace baton_app {

class MasterWeights;

struct RankPlan {
  baton::PluginLoader loader;        // outlives the plugins it loaded
  baton::ConfiguredPlugins plugins;  // schedule and transport
  baton::ConfiguredPlan configured;  // the plan, validated and lowered
  const baton::Plan& plan() const { return configured.plan.lowered; }
};

// Compiles the plan of `plugins` (those the run's front door loaded, resolved_config.h) for
// the world; `config` went through that front door with schedule: auto's choice in it. The
// last of a rank's set-up to read the configuration: what follows takes its settings
// (run_settings.h). Throws PlanError or ConfigError.
RankPlan plan_rank(const baton::Config& config, baton::ConfiguredPlugins plugins,
                   const WorldInfo& world);

// `names` (validation.validators): the built-in ones and validator plugins, in that order.
std::vector<std::shared_ptr<baton::Validator>> make_validators(
    const baton::Setting<std::vector<std::string>>& names, const baton::PluginLoader& loader);

// Drops the gradients of `params` (PyTorch's zero_grad(set_to_none=True)): the first
// microbatch's backward then hands its gradient over instead of adding it to a zeroed
// buffer — a memset and an addition of every gradient saved per step.
void clear_gradients(const std::vector<at::Tensor>& params);

struct RankPipelineOptions {
  std::string data_dir;  // the shipped data (the quickstart text)
  bool resume = false;   // stages load the newest checkpoint's parameters
  // A transport several pipelines share (the rotation); none: the configured one is connected.
  ConnectedTransport shared_transport;
  // The executor's options but those the run decides (timeout, replica, replicas).
  baton::ExecutorOptions executor;
  // Recorded when set-up fails after the transport connected, before it disconnects.
  FailureRecord* failures = nullptr;
};

// Built in place and never copied; the stages refer to the model's chain and the executor to
// the stages.
struct RankPipeline {
  RankPlan plan;
  baton_models::BuiltModel model;
  std::unique_ptr<baton_models::BatchSource> batches;
  baton_models::Batch first_microbatch;  // step 1's first: this replica's rows of it
  bool prefetch_data = false;            // data.prefetch, decided for this machine
  LocalStages local;
  c10::Device device{c10::kCPU};  // world.device: where the rank's stages live (rank_device.h)
  std::optional<c10::ScalarType> autocast;  // precision.compute; empty: float32
  std::optional<c10::ScalarType> wire;      // precision.wire; empty: as the stages produce
  std::shared_ptr<baton::Transport> transport;
  baton::TransportInterfaces transport_interfaces;    // what its plugin lists beyond version 1
  std::unique_ptr<baton::PipelineExecutor> executor;  // set up by the caller (executor->setup)
  OptimizerSettings optimizer_settings;               // optimizer and lr_schedule, read once
  std::set<int> recompute_stages;                     // model.recompute, as the executor has it
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  // precision.params: bf16: the float32 masters the optimizer steps (local.params are they);
  // null in float32.
  std::unique_ptr<MasterWeights> masters;
  ~RankPipeline();
};

// What every executor of `pipeline` runs with, training's and evaluation's alike: the
// timeout, the device, the replicas, the stage names, the transport's interfaces and how the
// model counts its targets.
void set_rank_executor_options(baton::ExecutorOptions& options, const RankPipeline& pipeline,
                               const WorldInfo& world, std::chrono::milliseconds timeout);

std::unique_ptr<RankPipeline> build_rank_pipeline(RankPlan plan, const WorldInfo& world,
                                                  const std::shared_ptr<baton::Store>& store,
                                                  const RunSettings& settings,
                                                  RankPipelineOptions options);

}  // namespace baton_app
