#include "executor_checks.h"

#include <string>
#include <utility>

#include "baton/error.h"

namespace baton {

std::map<int, std::shared_ptr<Stage>> place_stages(int rank, const Plan& plan,
                                                   std::vector<std::shared_ptr<Stage>> stages) {
  std::map<int, std::shared_ptr<Stage>> placed;
  for (auto& stage : stages) {
    const int index = stage->index();
    if (index < 0 || index >= plan.num_stages || plan.rank_of(index) != rank) {
      throw Error(
          "rank " + std::to_string(rank) + " was given " + stage->describe() +
          ", which the plan places on rank " +
          (index >= 0 && index < plan.num_stages ? std::to_string(plan.rank_of(index)) : "none"));
    }
    placed[index] = std::move(stage);
  }
  for (int index = 0; index < plan.num_stages; ++index) {
    if (plan.rank_of(index) == rank && !placed.count(index)) {
      throw Error("rank " + std::to_string(rank) + " holds stage " + std::to_string(index) +
                  " in the plan, but no stage object was given for it");
    }
  }
  return placed;
}

void check_plan_and_options(int rank, const Plan& plan, const ExecutorOptions& options) {
  if (rank < 0 || rank >= plan.num_ranks) {
    throw Error("rank " + std::to_string(rank) + " is outside the plan's " +
                std::to_string(plan.num_ranks) + " ranks");
  }
  // Transfer tags hold the microbatch in 20 bits and the stage in 18 (see comm_tags.h).
  if (plan.num_microbatches > (1 << 20) || plan.num_stages > (1 << 18)) {
    throw Error("the plan has " + std::to_string(plan.num_microbatches) + " microbatches and " +
                std::to_string(plan.num_stages) +
                " stages; at most 1048576 microbatches and 262144 stages are supported");
  }
  if (options.replicas < 1 || options.replica < 0 || options.replica >= options.replicas) {
    throw Error("replica " + std::to_string(options.replica) + " of " +
                std::to_string(options.replicas) + " does not exist");
  }
  if (options.gradients.bucket_bytes < 1) throw Error("gradient buckets need at least one byte");
  for (const int stage : options.recompute_stages) {
    if (stage < 0 || stage >= plan.num_stages) {
      throw Error("recompute names stage " + std::to_string(stage) + "; the plan has stages 0 to " +
                  std::to_string(plan.num_stages - 1));
    }
  }
}

}  // namespace baton
