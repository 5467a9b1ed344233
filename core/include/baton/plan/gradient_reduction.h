// Data parallelism in a plan: the replicas of a pipeline run the same plan on their own slices
// of the batch, and each stage's gradients are summed across the replicas before the
// optimizer step. The plan says when with PyTorch's REDUCE_GRAD action ("0REDUCE_GRAD"): right
// after the stage's last backward of the step (B, or W when the backward is split) and the
// transfers that follow it, so that the reduction overlaps with the work left on the rank
// (its other stages, the schedule's cool-down); the runtime waits for it only at the end of
// the step.
#pragma once

#include "baton/export.h"
#include "baton/plan/compile.h"
#include "baton/plan/plan.h"

namespace baton {

// `plan` (compute-only or lowered) with one sREDUCE_GRAD per stage, inserted on the stage's
// rank after its last backward and the SEND/RECV actions right after it. Throws PlanError when
// the plan already reduces, or a stage has no backward.
BATON_API Plan add_gradient_reduction(const Plan& plan);

// Both plans of `compiled`, reduced (the lowered one still completes: a REDUCE_GRAD waits for
// nothing on another rank).
BATON_API CompiledPlan with_gradient_reduction(const CompiledPlan& compiled);

// True when `plan` holds REDUCE_GRAD actions.
BATON_API bool reduces_gradients(const Plan& plan);

// True when rank `rank`'s column runs a backward (B, I or W, alone or in an overlapped pair):
// it has gradients to synchronise. A forward-only plan (evaluation) has none.
BATON_API bool rank_computes_gradients(const Plan& plan, int rank);

}  // namespace baton
