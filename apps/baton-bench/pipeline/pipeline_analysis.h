// The figures of `baton bench pipeline`, computed from what its processes recorded.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "baton/plan/plan.h"
#include "pipeline_record.h"

namespace baton_app {

// Where one rank's average measured step went (milliseconds).
struct RankBreakdown {
  double compute_ms = 0, post_ms = 0, wait_recv_forward_ms = 0, wait_recv_backward_ms = 0,
         wait_sends_ms = 0, executor_other_ms = 0, between_steps_ms = 0;
  // Data parallelism: the wait at the step's end for the gradient all-reduces.
  double wait_reduce_ms = 0;
  double actions = 0;  // compute actions per step
  // Time per compute action outside waiting for data: the action itself, posting its
  // transfers and the executor's bookkeeping. With the identity model (no compute) this is
  // the runtime's own cost per action.
  double per_action_us() const {
    return actions > 0 ? (compute_ms + post_ms + executor_other_ms) * 1000 / actions : 0;
  }
};

// Median cost of one action kind on one stage.
struct ActionCost {
  int stage = 0;
  std::string type;  // "F", "B", "I", "W"
  double ms = 0;
  int samples = 0;
};

struct PipelineFigures {
  std::string schedule;
  int ranks = 0, stages = 0, microbatches = 0, measured_steps = 0;
  double real_ms = 0, predicted_ms = 0, unpipelined_ms = 0, unpipelined_concurrent_ms = 0;
  double bound_ms = 0;
  // The schedule's own step / one rank's work, with perfectly balanced stages and free
  // transfers ((M + R - 1) / M for 1F1B): bound_ms = unpipelined_concurrent_ms / R * this.
  double ideal_ratio = 0;
  double efficiency = 0, speedup = 0;
  double transfer_ms = 0;  // one stage-boundary message, one way
  std::int64_t transfer_bytes = 0;
  // What a step adds to the heap at its peak (its activations and the backward's
  // temporaries), median over the steps, on the rank where it is largest.
  std::int64_t activations_peak_bytes = 0;
  double send_post_ms = 0;
  double recv_post_ms = 0;  // one receive's share of a step's 'post receives'
  std::vector<ActionCost> action_costs;
  // The configured validators' cost: per check (measured in the bench's own process on a
  // tensor of the stage-boundary shape) x the checks of a step on the busiest rank.
  double validator_check_us = 0;
  double validator_share = 0;  // of real_ms
  std::vector<RankBreakdown> ranks_breakdown;
};

// The intervals between rank 0's step starts after `warmup` (its step times when it ran
// only one), in milliseconds: what the whole pipeline sustains, step by step.
std::vector<double> step_intervals_ms(const std::vector<PipelineRecord>& records, int warmup);

// The real step: the median of step_intervals_ms, in milliseconds.
double real_step_ms(const std::vector<PipelineRecord>& records, int warmup);

// `records`: one per rank; steps up to `warmup` are left out. `plan`: the lowered plan.
void analyse_pipeline(const std::vector<PipelineRecord>& records, int warmup,
                      const baton::Plan& plan, PipelineFigures* figures);

std::string format_pipeline_table(const PipelineFigures& figures);
std::string format_pipeline_json(const PipelineFigures& figures);

// `measured` beside `baseline` (the same step with the `changes` settings): each headline
// figure, the two and their ratio; then `measured`'s own table.
std::string format_comparison_table(const PipelineFigures& measured,
                                    const PipelineFigures& baseline,
                                    const std::vector<std::string>& changes);
std::string format_comparison_json(const PipelineFigures& measured, const PipelineFigures& baseline,
                                   const std::vector<std::string>& changes);

}  // namespace baton_app
