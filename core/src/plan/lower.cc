// Comm insertion; see lower.h for the rules and why RECVs sit right before their consumer.
#include "baton/plan/lower.h"

#include <vector>

#include "baton/error.h"
#include "baton/plan/validate.h"
#include "passes_internal.h"

namespace baton {
namespace {

bool is_input_gradient(ActionType type) {
  return type == ActionType::kBackward || type == ActionType::kBackwardInput;
}

// Appends the RECVs `compute` needs before it runs.
void append_recvs(const Plan& plan, int rank, const Action& compute, std::vector<PlanSlot>* out) {
  const int stage = compute.stage;
  if (compute.type == ActionType::kForward && stage > 0 && plan.stage_to_rank[stage - 1] != rank) {
    out->push_back(make_action(stage, ActionType::kRecvForward, compute.microbatch));
  }
  // The last stage's gradient comes from its own loss, so it never receives one.
  if (is_input_gradient(compute.type) && stage + 1 < plan.num_stages &&
      plan.stage_to_rank[stage + 1] != rank) {
    out->push_back(make_action(stage, ActionType::kRecvBackward, compute.microbatch));
  }
}

// Appends the SENDs of what `compute` produced.
void append_sends(const Plan& plan, int rank, const Action& compute, std::vector<PlanSlot>* out) {
  const int stage = compute.stage;
  if (compute.type == ActionType::kForward && stage + 1 < plan.num_stages &&
      plan.stage_to_rank[stage + 1] != rank) {
    out->push_back(make_action(stage, ActionType::kSendForward, compute.microbatch));
  }
  if (is_input_gradient(compute.type) && stage > 0 && plan.stage_to_rank[stage - 1] != rank) {
    out->push_back(make_action(stage, ActionType::kSendBackward, compute.microbatch));
  }
}

}  // namespace

namespace plan_internal {

Plan insert_comms(const Plan& compute_plan) {
  Plan lowered;
  lowered.num_ranks = compute_plan.num_ranks;
  lowered.num_stages = compute_plan.num_stages;
  lowered.num_microbatches = compute_plan.num_microbatches;
  lowered.placement = compute_plan.placement;
  lowered.stage_to_rank = compute_plan.stage_to_rank;
  lowered.schedule_name = compute_plan.schedule_name;
  lowered.rank_steps.resize(compute_plan.rank_steps.size());
  for (int rank = 0; rank < compute_plan.num_ranks; ++rank) {
    std::vector<PlanSlot> steps;
    // Each compute action gains at most a RECV and a SEND per part.
    steps.reserve(compute_plan.rank_steps[rank].size() * 3);
    for (const PlanSlot& slot : compute_plan.rank_steps[rank]) {
      if (!slot) continue;
      const bool overlap = slot->type == ActionType::kOverlapForwardBackward;
      const Action* first = overlap ? slot->sub_actions.data() : &*slot;
      const Action* last = overlap ? first + slot->sub_actions.size() : first + 1;
      for (const Action* part = first; part != last; ++part) {
        append_recvs(compute_plan, rank, *part, &steps);
      }
      steps.push_back(*slot);
      for (const Action* part = first; part != last; ++part) {
        append_sends(compute_plan, rank, *part, &steps);
      }
    }
    lowered.rank_steps[rank] = std::move(steps);
  }
  return lowered;
}

}  // namespace plan_internal

Plan lower(const Plan& compute_plan) {
  if (compute_plan.has_comms()) {
    throw PlanError("cannot lower plan \"" + compute_plan.schedule_name +
                    "\": it already holds SEND/RECV actions; lower the compute-only plan, or use "
                    "the plan as it is");
  }
  validate_plan(compute_plan);
  Plan lowered = plan_internal::insert_comms(compute_plan);
  plan_internal::check_completes(lowered);
  return lowered;
}

void check_can_complete(const Plan& lowered_plan) {
  validate_plan(lowered_plan);
  plan_internal::check_completes(lowered_plan);
}

}  // namespace baton
