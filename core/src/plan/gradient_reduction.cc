#include "baton/plan/gradient_reduction.h"

#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/plan/lower.h"
#include "baton/plan/validate.h"

namespace baton {
namespace {

bool is_backward_end(const Action& action, int stage) {
  if (action.type == ActionType::kOverlapForwardBackward) {
    for (const Action& part : action.sub_actions) {
      if (is_backward_end(part, stage)) return true;
    }
    return false;
  }
  return action.stage == stage &&
         (action.type == ActionType::kBackward || action.type == ActionType::kBackwardWeight);
}

bool computes_gradients(const Action& action) {
  if (action.type == ActionType::kOverlapForwardBackward) {
    for (const Action& part : action.sub_actions) {
      if (computes_gradients(part)) return true;
    }
    return false;
  }
  return action.type == ActionType::kBackward || action.type == ActionType::kBackwardInput ||
         action.type == ActionType::kBackwardWeight;
}

}  // namespace

bool rank_computes_gradients(const Plan& plan, int rank) {
  for (const PlanSlot& slot : plan.rank_steps.at(static_cast<std::size_t>(rank))) {
    if (slot && computes_gradients(*slot)) return true;
  }
  return false;
}

bool reduces_gradients(const Plan& plan) {
  for (const auto& steps : plan.rank_steps) {
    for (const PlanSlot& slot : steps) {
      if (slot && slot->type == ActionType::kReduceGrad) return true;
    }
  }
  return false;
}

Plan add_gradient_reduction(const Plan& plan) {
  if (reduces_gradients(plan)) {
    throw PlanError("plan \"" + plan.schedule_name +
                    "\" already reduces gradients (it has REDUCE_GRAD actions)");
  }
  Plan reduced = plan;
  for (int stage = 0; stage < plan.num_stages; ++stage) {
    const int rank = plan.stage_to_rank.at(static_cast<std::size_t>(stage));
    std::vector<PlanSlot>& steps = reduced.rank_steps.at(static_cast<std::size_t>(rank));
    int last = -1;
    for (int step = 0; step < static_cast<int>(steps.size()); ++step) {
      if (steps[step] && is_backward_end(*steps[step], stage)) last = step;
    }
    if (last < 0) {
      throw PlanError("stage " + std::to_string(stage) + " of plan \"" + plan.schedule_name +
                      "\" never runs a backward (B or W) on rank " + std::to_string(rank) +
                      ": there is no gradient to reduce");
    }
    // After the transfers the backward feeds: the previous stage's rank should not wait for
    // this rank to copy its gradients.
    int at = last + 1;
    while (at < static_cast<int>(steps.size()) && steps[at] && is_comm(steps[at]->type)) ++at;
    Action reduce;
    reduce.stage = stage;
    reduce.type = ActionType::kReduceGrad;
    steps.insert(steps.begin() + at, PlanSlot(reduce));
  }
  return reduced;
}

CompiledPlan with_gradient_reduction(const CompiledPlan& compiled) {
  CompiledPlan reduced;
  reduced.compute = add_gradient_reduction(compiled.compute);
  reduced.lowered = add_gradient_reduction(compiled.lowered);
  check_can_complete(reduced.lowered);
  return reduced;
}

}  // namespace baton
