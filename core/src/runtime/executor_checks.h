// Internal: what the executor checks before it starts — the plan against this rank and its
// options, and the stages it was given against the plan's placement.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "baton/plan/plan.h"
#include "baton/runtime/executor.h"
#include "baton/stage.h"

namespace baton {

// Throws Error when `rank` is not one of the plan's, the plan is larger than transfer tags can
// name, the replica does not exist, or an option is out of its range.
void check_plan_and_options(int rank, const Plan& plan, const ExecutorOptions& options);

// The stages given to the executor, by index; throws Error when one is not placed on `rank`
// by the plan, or a stage the plan places there is missing.
std::map<int, std::shared_ptr<Stage>> place_stages(int rank, const Plan& plan,
                                                   std::vector<std::shared_ptr<Stage>> stages);

}  // namespace baton
