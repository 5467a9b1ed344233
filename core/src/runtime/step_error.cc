#include "baton/step_error.h"

#include "baton/plan/format.h"
#include "baton/topology.h"

namespace baton {

StepError::StepError(int rank, int training_step, int timestep, std::string action,
                     std::string cause, const std::string& message)
    : Error(message),
      rank_(rank),
      training_step_(training_step),
      timestep_(timestep),
      action_(std::move(action)),
      cause_(std::move(cause)) {}

StepError annotate_step_error(const Plan& plan, int rank, int training_step, int timestep,
                              const std::string& cause, int replica, int replicas) {
  std::string action = "(none)";
  if (rank >= 0 && rank < static_cast<int>(plan.rank_steps.size()) && timestep >= 0 &&
      timestep < static_cast<int>(plan.rank_steps[rank].size()) &&
      plan.rank_steps[rank][timestep].has_value()) {
    action = to_string(*plan.rank_steps[rank][timestep]);
  }
  const std::string schedule = plan.schedule_name.empty() ? "?" : plan.schedule_name;
  const int world_rank = Topology{replicas, plan.num_ranks}.rank(replica, rank);
  const std::string who = replicas > 1
                              ? "rank " + std::to_string(world_rank) + " (replica " +
                                    std::to_string(replica) + " of " + std::to_string(replicas) +
                                    ", pipeline rank " + std::to_string(rank) + ")"
                              : "rank " + std::to_string(rank);
  std::string message = who + ", training step " + std::to_string(training_step) + ", timestep " +
                        std::to_string(timestep) + " of schedule '" + schedule + "', action " +
                        action + ": " + cause + "\n\nplan (lowered, as this rank runs it):\n" +
                        format_plan_table(plan, {TableMarker{rank, timestep}});
  return StepError(world_rank, training_step, timestep, action, cause, message);
}

}  // namespace baton
