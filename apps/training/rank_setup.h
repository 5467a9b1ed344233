// The steps every rank of a run takes before it trains, in the order it takes them: logging,
// the world check, the store the ranks meet through, this rank's stages of the model, the
// transport and the validators. rank_pipeline.h puts them together; the rotation of `baton
// bench tune` uses the first three directly, once for all its candidates.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/config.h"
#include "baton/config_plugins.h"
#include "baton/runtime/executor.h"
#include "models.h"
#include "run_settings.h"
#include "world_env.h"

namespace baton_app {

// run.log_level was checked with the configuration; empty leaves BATON_LOG_LEVEL in force.
void set_up_logging(const baton::Config& config, const WorldInfo& world);

// Throws ConfigError when a launcher started another number of ranks than world.ranks.
void check_world_size(const baton::Config& config, const WorldInfo& world);

// The store every rank meets through; null for a single rank, which talks to nobody.
std::shared_ptr<baton::Store> meet_the_other_ranks(const baton::Config& config,
                                                   const WorldInfo& world,
                                                   const RunSettings& settings);

// This rank's part of the model: its stages and their parameters, by full-model name.
struct LocalStages {
  std::vector<int> bounds;               // every stage's first unit, then the unit count
  std::vector<std::string> stage_names;  // every stage of the plan: "layers.2 .. head"
  std::vector<std::shared_ptr<baton::Stage>> stages;
  std::vector<at::Tensor> params;
  std::vector<std::pair<std::string, at::Tensor>> named_params;
  std::vector<std::pair<std::string, at::Tensor>> named_buffers;  // of the model's state dict
  // Tensors the model holds under several names (tied weights), with each name's stage.
  std::vector<baton::TiedParameter> ties;
};

// The model's tied parameters: tensors that units hold under several names, with the stage
// (of `bounds`) holding each name, in the chain's order.
std::vector<baton::TiedParameter> find_tied_parameters(const baton::UnitChain& chain,
                                                       const std::vector<int>& bounds);

LocalStages cut_into_stages(const baton::Config& config, baton_models::BuiltModel& model,
                            const baton::ConfiguredPlan& configured, const WorldInfo& world,
                            const std::shared_ptr<baton::Store>& store, const RunSettings& settings,
                            const std::vector<at::Tensor>& first_microbatch, bool resume);

// The configured transport, connected to every other rank; null for a single rank. `device`:
// where the rank's tensors live (rank_device.h), which a GPU transport works on.
std::shared_ptr<baton::Transport> connect_transport(const baton::Config& config,
                                                    const baton::ConfiguredPlugins& plugins,
                                                    const WorldInfo& world,
                                                    const std::shared_ptr<baton::Store>& store,
                                                    std::chrono::milliseconds timeout,
                                                    c10::Device device = c10::Device(c10::kCPU));

// validation.validators: the built-in ones and validator plugins, in the configured order.
std::vector<std::shared_ptr<baton::Validator>> make_validators(const baton::Config& config,
                                                               const baton::PluginLoader& loader);

}  // namespace baton_app
