// Discrete-event replay of a plan with abstract per-action costs: how long one iteration takes,
// how much of it each rank sits idle (the pipeline bubble) and how many activations a rank holds
// at its peak. It answers "is this schedule any good?" before a GPU is involved.
//
// Execution model (the runtime's too: what an action needs and keeps is action_rules.h's table,
// which validation, this replay and the runtime read):
//  * every rank runs its actions in plan order, one at a time; idle slots take no time;
//  * F of stage s>0 needs the output of F(s-1) of the same microbatch: local when both stages
//    share a rank, else through a RECV_F that this rank ran earlier;
//  * B/I of the last stage needs its own F; B/I of an earlier stage needs the gradient of B/I(s+1)
//    (local, or through an earlier RECV_B); W needs its own I;
//  * SEND is asynchronous: it costs `send_overhead` (plus its stage's size-dependent part) on
//    the sender, and its data can be received `transfer_time` (plus its stage's part) after
//    the SEND ends (its posting done); a RECV waits until then;
//  * a rank posts all its receives together at its first SEND or RECV (the runtime does so
//    with transports that match receives by tag, gloo and UCX; posting one at a time costs
//    the same in all): that action also occupies the rank for `recv_overhead` times the
//    number of RECVs the rank has — a RECV before it waits, a SEND after its data has gone;
//  * REDUCE_GRAD is asynchronous too: it takes no time on its rank and the reduction runs
//    beside the rank's work, one at a time per rank (a rank's reductions share its link),
//    for the stage's `reduce_grad`; the step ends when the last one does;
//  * UNSHARD and RESHARD take no time; OVERLAP_F_B takes the sum of its parts (the overlap
//    hides communication, not compute).
// A plan without comm actions is lowered first (see lower.h), so the result always includes the
// SEND/RECV timeline entries.
#pragma once

#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/plan/action.h"
#include "baton/plan/action_rules.h"
#include "baton/plan/plan.h"

namespace baton {

// Abstract time units per action. For interleaved schedules with v stages per rank, scale the
// compute costs by 1/v (forward = 1/v, backward = 2/v) so a rank's total work stays the same as
// with one stage per rank; the bubble is then comparable across schedules.
struct SimulationCosts {
  double forward = 1.0;
  double backward = 2.0;         // full backward (B)
  double backward_input = 1.0;   // I
  double backward_weight = 1.0;  // W
  double send_overhead = 0.0;    // time a SEND occupies its sender
  double recv_overhead = 0.0;    // time posting one RECV occupies its receiver
  double transfer_time = 0.0;    // from a SEND's end until its RECV can complete
  double reduce_grad = 0.0;      // one stage's gradient all-reduce (REDUCE_GRAD)
};
// (Measured costs that differ by stage — what the schedule search and the benches replay a
// plan with — are the runtime's own: baton/plan/measured_costs.h, not installed.)

// What a caller needs from a replay. A search over many candidate plans wants the totals only:
// without the timeline and the copy of the plan a replay is several times cheaper.
struct SimulationOptions {
  bool timeline = true;   // SimulationResult::timeline, ordered by start time
  bool keep_plan = true;  // SimulationResult::lowered_plan
};

// One executed action. For a RECV, start is when the rank reached it and end is when the data
// arrived, so waiting shows up in the trace.
struct TimelineEntry {
  int rank = 0;
  int step = 0;  // index in the (lowered) plan's rank list
  Action action;
  double start = 0.0;
  double end = 0.0;
  // What the rank's stages keep for their microbatches once the action has run (action_rules.h):
  // the runtime's trace reports the same after each compute action.
  KeptTally kept;
};

struct RankStatistics {
  double busy_time = 0.0;        // time spent in compute actions (F, B, I, W, OVERLAP_F_B)
  double idle_time = 0.0;        // makespan - busy_time: waiting, comm overhead, finishing early
  double bubble_fraction = 0.0;  // idle_time / makespan
  // Peak count of stage-microbatch activations alive on the rank: +1 when an F runs, -1 when the
  // matching B runs, or the matching W when the backward is split (the weight gradient still
  // needs the stage inputs, so memory is released after W, not I).
  int peak_activations = 0;
  // The same in bytes, and the bytes the rank's stages hold all the time, when measured
  // costs give them (0 otherwise); their sum is the rank's simulated peak memory.
  double peak_activation_bytes = 0.0;
  double static_bytes = 0.0;
  double peak_memory_bytes() const { return static_bytes + peak_activation_bytes; }
  // Data parallelism: how long the rank's gradient reductions run in all, and how much of that
  // is exposed (the time from the end of its last other action to the end of its last
  // reduction): what the reductions add to the rank's step.
  double reduce_time = 0.0;
  double exposed_reduce_time = 0.0;
};

struct SimulationResult {
  std::string schedule_name;
  int num_ranks = 0;
  double makespan = 0.0;
  // Total idle time / (ranks x makespan). With costs F=1, B=2 (comm 0), GPipe and 1F1B give
  // (r-1)/(m+r-1) on every rank; interleaved 1F1B with F=1/v, B=2/v gives (r-1)/(v*m+r-1).
  double bubble_fraction = 0.0;
  std::vector<RankStatistics> ranks;
  std::vector<TimelineEntry> timeline;  // ordered by start time, then rank (options.timeline)
  Plan lowered_plan;  // the plan that was replayed, with comm actions (options.keep_plan)
};

// Replays `plan`. A compute-only plan is lowered first (which validates it). Throws PlanError when
// the plan cannot finish, naming every rank's blocked action and what it waits for, followed by
// the plan table with `<-- ERROR HERE` on the blocked steps.
// Throws PlanError for a negative or non-finite cost, naming it.
BATON_API SimulationResult simulate(const Plan& plan, const SimulationCosts& costs = {},
                                    const SimulationOptions& options = {});

}  // namespace baton
