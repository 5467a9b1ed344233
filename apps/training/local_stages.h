// This rank's part of the model: the model cut into the plan's stages (at model.cuts, or one
// stage per file), the stages this rank holds, their parameters and buffers by full-model
// name, and the model's tied parameters.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/config_plugins.h"
#include "baton/runtime/executor.h"
#include "baton/store.h"
#include "models.h"
#include "run_settings.h"
#include "world_info.h"

namespace baton_app {

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

// Cut at settings.stages.cuts (model.cuts).
LocalStages cut_into_stages(baton_models::BuiltModel& model,
                            const baton::ConfiguredPlan& configured, const WorldInfo& world,
                            const std::shared_ptr<baton::Store>& store, const RunSettings& settings,
                            const std::vector<at::Tensor>& first_microbatch, bool resume);

}  // namespace baton_app
