// Pieces shared between the plan passes that are not public API: lower() and simulate() both
// need comm insertion without the completion check, and the replay without lowering.
#pragma once

#include "baton/plan/plan.h"
#include "baton/plan/simulate.h"

namespace baton {
namespace plan_internal {

// lower() without validation or the completion check. `compute_plan` must be valid.
Plan insert_comms(const Plan& compute_plan);

// simulate() on `plan` exactly as written: no validation, no lowering. Throws PlanError when the
// plan cannot finish.
SimulationResult replay(const Plan& plan, const SimulationCosts& costs);

}  // namespace plan_internal
}  // namespace baton
