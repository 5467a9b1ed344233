// Static checks of a plan before anything runs it: every stage computes every microbatch exactly
// once, each rank orders dependent work correctly, actions sit on the rank that owns their stage
// and, in a lowered plan, every SEND has its RECV. Catching this here turns a hang or a wrong
// gradient on a cluster into an error message with a table pointing at the step.
//
// What is checked (OVERLAP_F_B counts as its two parts at the pair's step):
//  * the plan's shape: rank_steps/stage_to_rank sizes, ranks in range;
//  * stage and microbatch numbers in range; each action on the rank its stage is placed on;
//  * per stage and microbatch: exactly one F, and either exactly one B or exactly one I and one W;
//  * per rank: B/I after the F of the same stage/microbatch, W after its I, F(s+1) after F(s)
//    and backward(s) after backward(s+1) when both stages are on that rank;
//  * REDUCE_GRAD (data parallelism): at most once per stage, after every B/W of the stage on its
//    rank, and on every stage or on none;
//  * when the plan has comm actions: SEND_F/RECV_F and SEND_B/RECV_B pair up across every
//    cross-rank stage boundary, SENDs come after the compute that produces their data and RECVs
//    before the compute that consumes it, and no comm joins two stages on the same rank.
// Not checked: cross-rank ordering cycles (deadlocks); lower() and simulate() find those.
#pragma once

#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/plan/plan.h"

namespace baton {

struct PlanIssue {
  int rank = -1;        // -1 when the problem belongs to no single rank (the plan's shape)
  int step = -1;        // -1 when it belongs to no single step (for example a missing action)
  std::string action;   // the action's text at (rank, step); empty when step is -1
  std::string message;  // what is wrong and what is expected, without the location
};

// All problems found, earliest step first (step-less problems last). Empty when valid.
BATON_API std::vector<PlanIssue> find_plan_issues(const Plan& plan);

// Throws PlanError when find_plan_issues reports anything. The message names the first issue's
// rank, step and action, lists the others, and ends with the plan table marked `<-- ERROR HERE`.
BATON_API void validate_plan(const Plan& plan);

// The message validate_plan would throw for `issues` (non-empty).
BATON_API std::string describe_plan_issues(const Plan& plan, const std::vector<PlanIssue>& issues);

}  // namespace baton
