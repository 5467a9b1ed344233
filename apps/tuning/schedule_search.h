// The schedule search behind `baton tune` and `schedule.name: auto`: for every schedule
// plugin that accepts the shape (its own check() decides), every stages_per_rank the units
// allow and every microbatch count that divides the batch, cut the model into stages
// balanced on measured cost, simulate the plan with the measured costs, drop what exceeds
// the memory limit, and rank by predicted step time. LibTorch-free: it needs a profile
// (model_profile.h), the plugin loader and the plan compiler.
#pragma once

#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/plan/measured_costs.h"
#include "baton/plan/simulate.h"
#include "baton/plugin_loader.h"
#include "model_profile.h"

namespace baton_app {

// What a stage keeps, and what its replicas' all-reduce moves, for each byte of its
// parameters as the profile counts them: the float32 masters' bytes (model_profiler.h).
struct ParameterBytes {
  double optimizer_state = 2;  // adam and adamw: two moments; sgd: 1 with momentum, else 0
  // precision.params: bf16 — the stage computes with a bf16 copy (half a master byte) next
  // to the float32 masters and gradients: Megatron's 18 bytes per parameter against 16.
  double low_precision_copy = 0;
  double reduced = 1;  // precision.reduce: bf16 sends half the gradient bytes (0.5)
  // Weights, their float32 gradients, the optimizer's state and any bf16 copy.
  double held_per_byte() const { return 2.0 + optimizer_state + low_precision_copy; }
};

// The optimizer section's state and precision.params / reduce, as ParameterBytes.
ParameterBytes parameter_bytes_from_config(const baton::Config& config);

struct SearchSpace {
  int ranks = 0;       // of one pipeline
  int batch_size = 0;  // of one pipeline (data.batch_size)
  // Schedule plugins to try (names or paths); empty: every one the loader finds.
  std::vector<std::string> schedules;
  int microbatches = 0;            // fixed by the user; 0: every count that divides the batch
  int stages_per_rank = 0;         // fixed by the user; 0: 1 .. units / ranks (at most 8)
  double memory_limit_bytes = 0;   // per rank; 0: no limit
  ParameterBytes parameter_bytes;  // what each parameter byte costs a stage to hold
  // Replicas of the pipeline (world.data_parallel): each plan reduces its gradients across
  // them (REDUCE_GRAD), costed as a ring all-reduce over the profiled transfer costs.
  int data_parallel = 1;
  // A plan over the memory limit may recompute every stage's activations (model.recompute:
  // on) instead: one more forward per backward, only the stages' inputs held between them.
  // Off when the configuration sets model.recompute itself.
  bool may_recompute = true;
};

struct Candidate {
  std::string schedule;
  int stages_per_rank = 1;
  int microbatches = 1;
  std::vector<int> bounds;  // stage boundaries over the units: 0, ..., units
  bool recompute = false;   // every stage recomputes (model.recompute: on)
  double predicted_step_s = 0;
  std::vector<double> predicted_compute_s;  // per pipeline rank: its F, B, I and W in the step
  double bubble = 0;
  double peak_memory_bytes = 0;  // the largest rank's
  int peak_memory_rank = 0;
  // Other schedules whose plan for this shape is this very plan (each rank's actions in the
  // same order, the stages on the same ranks): 1F1B and interleaved 1F1B at one stage per
  // rank, say. Listed here rather than as candidates of their own.
  std::vector<std::string> same_plan;
};

struct Refusal {
  std::string schedule;
  int stages_per_rank = 1;
  int microbatches = 1;
  std::string reason;
};

struct SearchResult {
  std::vector<Candidate> ranked;       // fastest first
  std::vector<Candidate> over_memory;  // simulated, but above the memory limit
  std::vector<Refusal> refused;        // shapes a plugin (or the model) cannot run
  int simulated = 0;
};

// The search a configuration asks for: schedule.name (`auto`: every plugin), the
// schedule.microbatches / stages_per_rank the configuration sets itself (not their
// defaults), schedule.memory_limit_mb, the bytes each parameter byte costs (the optimizer's
// state, precision.params and reduce), and whether recomputation may be chosen (model.recompute
// left at its default). Throws ConfigError for a negative memory limit, naming where it was set.
// `ranks` and `batch_size` are the whole world's: with world.data_parallel D the space is one
// replica's pipeline (ranks / D, batch_size / D), its plans reducing across D replicas.
SearchSpace search_space_from_config(const baton::Config& config, int ranks, int batch_size);

// Stage boundaries over the units, balanced on their measured compute (forward and full
// backward) at this microbatch size: how the search cuts every candidate.
std::vector<int> balanced_cuts(const MicrobatchProfile& measured, int num_stages);

// Simulator costs of one candidate: stage s runs units [bounds[s], bounds[s+1]).
// With `data_parallel` D > 1 each stage's REDUCE_GRAD costs a ring all-reduce of its
// gradients: 2(D-1) messages of 1/D of them each way, in precision.reduce's bytes. A stage
// holds `parameters.held_per_byte()` for each of its parameter bytes. Every stage's I and W
// are scaled by `split_backward_factor` (ModelProfile::split_backward_factor).
baton::MeasuredCosts simulation_costs(const MicrobatchProfile& measured,
                                      const std::vector<int>& bounds,
                                      const TransferProfile& transfer,
                                      const ParameterBytes& parameters, int data_parallel = 1,
                                      double split_backward_factor = 1.0);

// Throws ConfigError when nothing can run (naming why each shape was refused) or when
// nothing fits the memory limit (naming the smallest candidate's need).
SearchResult search_schedules(const baton::PluginLoader& loader, const ModelProfile& profile,
                              const SearchSpace& space);

// "[2, 5]": the cuts (inner boundaries) as model.cuts takes them.
std::string cuts_text(const std::vector<int>& bounds);

// The ranked table (`top` rows; 0: all), then the candidates over the memory limit and the
// refusals, and why the winner won.
std::string format_search_table(const SearchResult& result, std::size_t top);
std::string format_search_json(const SearchResult& result);

}  // namespace baton_app
