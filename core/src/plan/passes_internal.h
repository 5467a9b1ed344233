// Pieces shared between the plan passes that are not public API: lower() and simulate() both
// need comm insertion without the completion check, and the replay without lowering.
#pragma once

#include "baton/plan/measured_costs.h"
#include "baton/plan/plan.h"
#include "baton/plan/simulate.h"

namespace baton {
namespace plan_internal {

// lower() without validation or the completion check. `compute_plan` must be valid.
Plan insert_comms(const Plan& compute_plan);

// simulate() on `plan` exactly as written: no validation, no lowering. Throws PlanError when the
// plan cannot finish. `plan` must have passed validate_plan (stages on their ranks, no
// duplicates): the replay keys what has finished by (kind, stage, microbatch).
SimulationResult replay(const Plan& plan, const MeasuredCosts& costs,
                        const SimulationOptions& options);

// The replay with default costs and nothing kept: does `plan` finish?
void check_completes(const Plan& plan);

}  // namespace plan_internal
}  // namespace baton
