// From a schedule plugin to a checked, runnable plan: the one path both `baton plan` and
// the runtime take, so a schedule that emits a bad plan is refused before any tensor moves.
#pragma once

#include "baton/export.h"
#include "baton/plan/plan.h"
#include "baton/schedule.h"

namespace baton {

struct CompiledPlan {
  Plan compute;  // what the schedule asked for (for a plan given with comms: that plan)
  Plan lowered;  // with SEND/RECV, proven able to complete
};

// Throws PlanError when the shape is outside what baton plans (baton/plan/shape_limits.h),
// before the schedule allocates anything for it. compile_schedule() calls it first.
BATON_API void check_shape_limits(const ScheduleShape& shape);

// check() → build() → shape check → validate → lower (or, for a plan that already has
// comms, check it can complete). Throws ConfigError (shape rejected by the schedule) or
// PlanError (the plan is wrong; the message carries the table with the failing step).
BATON_API CompiledPlan compile_schedule(const Schedule& schedule, const ScheduleShape& shape,
                                        const std::string& schedule_name);

}  // namespace baton
