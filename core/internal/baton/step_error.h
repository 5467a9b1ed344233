// Timestep-annotated errors: any exception while a rank runs its plan is caught once and
// rethrown as a StepError naming the rank, the step (timestep) of the lowered plan, the
// schedule, the action, and the whole plan table with the failing step marked.
#pragma once

#include <string>

#include "baton/error.h"
#include "baton/export.h"
#include "baton/plan/plan.h"

namespace baton {

class BATON_API StepError : public Error {
 public:
  StepError(int rank, int training_step, int timestep, std::string action, std::string cause,
            const std::string& message);
  ~StepError() override;

  int rank() const { return rank_; }
  int training_step() const { return training_step_; }
  int timestep() const { return timestep_; }
  const std::string& action() const { return action_; }
  // The original error's message, without the annotation.
  const std::string& cause() const { return cause_; }

 private:
  int rank_;
  int training_step_;
  int timestep_;
  std::string action_;
  std::string cause_;
};

// Builds the StepError for `plan` (the lowered plan this rank runs; `rank` is its column).
// With data parallelism (`replicas` > 1) the message names the process's rank, the replica
// and the pipeline rank: "rank 3 (replica 1 of 2, pipeline rank 1)".
BATON_API StepError annotate_step_error(const Plan& plan, int rank, int training_step, int timestep,
                                        const std::string& cause, int replica = 0,
                                        int replicas = 1);

}  // namespace baton
