// Internal: measured costs for the plan simulator — per stage, as the schedule search
// (apps/tuning) derives them from a model profile and as `baton bench pipeline` measures them
// in a run — with the memory each stage holds. A schedule author replays a plan with the
// uniform SimulationCosts of baton/plan/simulate.h; these are the cost model's own inputs.
#pragma once

#include <vector>

#include "baton/export.h"
#include "baton/plan/simulate.h"

namespace baton {

// Costs of one stage, for plans whose stages differ (measured costs): its compute, what its
// transfers add to `transfer_time` and its sends to `send_overhead`, and the memory it holds.
struct StageCosts {
  double forward = 1.0;
  double backward = 2.0;
  double backward_input = 1.0;
  double backward_weight = 1.0;
  // Added to SimulationCosts::transfer_time for this stage's SEND_F (its output, to the next
  // stage) and SEND_B (its input gradient, to the previous stage): the size-dependent part.
  double forward_transfer = 0.0;
  double backward_transfer = 0.0;
  // Added to SimulationCosts::send_overhead for the same two SENDs: what a message of this
  // size occupies its sender for beyond the fixed part.
  double forward_send_overhead = 0.0;
  double backward_send_overhead = 0.0;
  // Bytes one microbatch keeps alive on the stage's rank from its F until its B (or its W,
  // when the backward is split), and bytes the stage holds all the time (parameters, their
  // gradients, optimizer state). Only reported (RankStatistics), never a cost.
  double activation_bytes = 0.0;
  double static_bytes = 0.0;
  // Activation recomputation (model.recompute, ExecutorOptions::recompute_stages): from F
  // until its B (or I) a microbatch keeps only the stage's inputs, `input_bytes`, and B (or
  // I) runs the forward again first — its duration includes `forward`, and from there
  // `activation_bytes` are held as without recomputation (until B ends, or W).
  bool recompute = false;
  double input_bytes = 0.0;
  // How long the all-reduce of the stage's gradients across the data-parallel replicas takes
  // (REDUCE_GRAD); replaces SimulationCosts::reduce_grad for this stage.
  double reduce_grad = 0.0;
};

// Uniform costs, with stages that differ: `stages` (index = stage) replaces the four compute
// figures for the stages it covers; empty: every stage costs the same.
struct MeasuredCosts : SimulationCosts {
  MeasuredCosts() = default;
  explicit MeasuredCosts(const SimulationCosts& uniform) : SimulationCosts(uniform) {}
  std::vector<StageCosts> stages;

  // What a stage `stages` does not cover costs: the uniform figures.
  StageCosts uniform_stage() const {
    StageCosts stage{forward, backward, backward_input, backward_weight};
    stage.reduce_grad = reduce_grad;
    return stage;
  }
};

// simulate() with measured costs. Throws as simulate() does, naming a bad stage's cost.
BATON_API SimulationResult simulate(const Plan& plan, const MeasuredCosts& costs,
                                    const SimulationOptions& options = {});

}  // namespace baton
