// Lowering: turns a compute-only plan (what a schedule produces) into the plan the runtime
// executes, with explicit SEND/RECV actions between ranks. Sends are asynchronous and a RECV waits
// for its SEND to have been issued, so each RECV goes right before the compute that consumes it
// and each SEND right after the compute that produces it: the lowered plan can then only hang if
// the compute order itself has a cross-rank cycle, which lower() reports.
#pragma once

#include "baton/export.h"
#include "baton/plan/plan.h"

namespace baton {

// Returns `compute_plan` with comm actions inserted, per rank and in order:
//  * before F of stage s (s > 0) when stage s-1 is on another rank:        sRECV_Fm
//  * after F of stage s when stage s+1 is on another rank:                 sSEND_Fm
//  * before B/I of stage s (not the last) when stage s+1 is on another rank: sRECV_Bm
//  * after B/I of stage s (s > 0) when stage s-1 is on another rank:       sSEND_Bm
// OVERLAP_F_B gets the RECVs of both parts before it and the SENDs of both after it. Stages on
// the same rank pass tensors locally (no comm); idle slots are dropped. Deterministic.
// Throws PlanError when `compute_plan` has comm actions already, fails validate_plan, or cannot
// finish once lowered (a cross-rank ordering cycle; see check_can_complete).
BATON_API Plan lower(const Plan& compute_plan);

// Throws PlanError unless `lowered_plan` (taken literally: no comm actions are added) passes
// validate_plan and every rank can run to its end under the execution model of simulate.h. The
// message names each blocked rank's action and what it waits for, with the table marked.
BATON_API void check_can_complete(const Plan& lowered_plan);

}  // namespace baton
