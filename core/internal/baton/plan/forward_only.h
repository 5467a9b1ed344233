// The plan of a forward-only pass (evaluation): every microbatch through every stage, with
// no backward, on the ranks and stages of a training plan. Each rank runs its stages in
// order, each for every microbatch (stage-major, as GPipe's forward half), receiving each
// input right before its F and sending each output right after: every F depends only on
// earlier stages, and each rank takes its stages in ascending order, so the pass finishes
// whatever the placement (loop, interleaved or V-shaped).
#pragma once

#include "baton/export.h"
#include "baton/plan/plan.h"

namespace baton {

// A lowered plan (with its SEND_F/RECV_F) of `microbatches` forwards through the stages of
// `plan`, placed as `plan` places them. Throws PlanError when `microbatches` < 1.
BATON_API Plan forward_only_plan(const Plan& plan, int microbatches);

}  // namespace baton
