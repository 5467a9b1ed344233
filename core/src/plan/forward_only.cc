#include "baton/plan/forward_only.h"

#include <string>

#include "baton/error.h"

namespace baton {

Plan forward_only_plan(const Plan& plan, int microbatches) {
  if (microbatches < 1) {
    throw PlanError("a forward-only pass needs at least 1 microbatch, got " +
                    std::to_string(microbatches));
  }
  Plan forward;
  forward.num_ranks = plan.num_ranks;
  forward.num_stages = plan.num_stages;
  forward.num_microbatches = microbatches;
  forward.placement = plan.placement;
  forward.stage_to_rank = plan.stage_to_rank;
  forward.schedule_name = plan.schedule_name.empty() ? "forward" : plan.schedule_name + " forward";
  forward.rank_steps.resize(static_cast<std::size_t>(plan.num_ranks));
  for (int stage = 0; stage < plan.num_stages; ++stage) {
    const int rank = plan.stage_to_rank[static_cast<std::size_t>(stage)];
    auto& steps = forward.rank_steps[static_cast<std::size_t>(rank)];
    const bool receives =
        stage > 0 && plan.stage_to_rank[static_cast<std::size_t>(stage - 1)] != rank;
    const bool sends = stage + 1 < plan.num_stages &&
                       plan.stage_to_rank[static_cast<std::size_t>(stage + 1)] != rank;
    for (int mb = 0; mb < microbatches; ++mb) {
      if (receives) steps.emplace_back(Action{stage, ActionType::kRecvForward, mb, {}});
      steps.emplace_back(Action{stage, ActionType::kForward, mb, {}});
      if (sends) steps.emplace_back(Action{stage, ActionType::kSendForward, mb, {}});
    }
  }
  return forward;
}

}  // namespace baton
