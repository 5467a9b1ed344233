#include "local_stages.h"

#include <map>
#include <set>

#include "baton/error.h"
#include "baton/unit_chain.h"
#include "stage_cuts.h"

namespace baton_app {

std::vector<baton::TiedParameter> find_tied_parameters(const baton::UnitChain& chain,
                                                       const std::vector<int>& bounds) {
  std::vector<baton::TiedParameter> groups;
  std::map<const void*, std::size_t> group_of;  // tensor -> its group, in order of appearance
  for (std::size_t s = 0; s + 1 < bounds.size(); ++s) {
    for (int unit = bounds[s]; unit < bounds[s + 1]; ++unit) {
      for (const auto& [name, tensor] : chain.unit_parameters(unit)) {
        const auto [found, added] = group_of.emplace(tensor.unsafeGetTensorImpl(), groups.size());
        if (added) groups.emplace_back();
        groups[found->second].names.push_back(name);
        groups[found->second].stages.push_back(static_cast<int>(s));
      }
    }
  }
  std::vector<baton::TiedParameter> ties;
  for (auto& group : groups) {
    if (group.names.size() > 1) ties.push_back(std::move(group));
  }
  return ties;
}

LocalStages cut_into_stages(baton_models::BuiltModel& model,
                            const baton::ConfiguredPlan& configured, const WorldInfo& world,
                            const std::shared_ptr<baton::Store>& store, const RunSettings& settings,
                            const std::vector<at::Tensor>& first_microbatch, bool resume) {
  const baton::ScheduleShape& shape = configured.shape;
  StageCutContext context;
  context.rank = world.rank;
  context.store = store;
  context.timeout = settings.timeout;
  context.run_dir = settings.run_dir;
  context.resume = resume;
  LocalStages local;
  if (model.stage_files) {
    // One file per stage, as the author split it (config check compared the counts).
    if (model.chain->num_units() != shape.num_stages()) {
      throw baton::ConfigError("model.stages lists " + std::to_string(model.chain->num_units()) +
                               " stage files but the plan has " +
                               std::to_string(shape.num_stages()) + " stages");
    }
    for (int s = 0; s <= shape.num_stages(); ++s) local.bounds.push_back(s);
  } else {
    local.bounds = resolve_stage_boundaries(settings.stages.cuts, *model.chain, shape.num_stages(),
                                            first_microbatch, context);
  }
  for (int s = 0; s < shape.num_stages(); ++s) {
    const int first = local.bounds[s];
    const int last = local.bounds[s + 1] - 1;
    local.stage_names.push_back(model.chain->unit_name(first) +
                                (last > first ? " .. " + model.chain->unit_name(last) : ""));
  }
  local.ties = find_tied_parameters(*model.chain, local.bounds);
  const baton::Plan& plan = configured.plan.lowered;
  // A tensor two local stages share (a tie on this rank) is one parameter to the optimizer,
  // though it keeps both names.
  std::set<const void*> seen;
  for (int s = 0; s < shape.num_stages(); ++s) {
    if (plan.stage_to_rank[s] != world.pipeline_rank) continue;
    local.stages.push_back(
        baton::make_chain_stage(model.chain, s, local.bounds[s], local.bounds[s + 1]));
    for (const auto& named : local.stages.back()->named_parameters()) {
      if (seen.insert(named.second.unsafeGetTensorImpl()).second) {
        local.params.push_back(named.second);
      }
      local.named_params.push_back(named);
    }
    for (auto& named : local.stages.back()->named_buffers()) {
      local.named_buffers.push_back(std::move(named));
    }
  }
  return local;
}

}  // namespace baton_app
