// Internal: the computations of this rank's stages in one step — forward, full backward, and
// the zero-bubble halves (I, W) — with their per-microbatch autograd state, the loss on the
// last stage, the count of live activations, and the validators' checks on every tensor that
// enters or leaves a stage. Data from other ranks comes through `AwaitReceive`; what this
// rank sends is handed out by outgoing().
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "baton/plan/action_rules.h"
#include "baton/plan/plan.h"
#include "baton/runtime/executor.h"
#include "baton/runtime/split_backward.h"
#include "baton/stage.h"
#include "baton/tensor_meta.h"
#include "baton/validator.h"
#include "wire_dtype.h"

namespace baton {

class StageCompute {
 public:
  // Waits for the receive `receive` (a RECV_F or RECV_B action) and returns its buffers.
  using AwaitReceive = std::function<const std::vector<at::Tensor>&(const Action& receive)>;

  // Told that W has finished a parameter's gradient (the stage, the parameter's index in its
  // named_parameters()); a full backward's are seen by hooks on the accumulators instead.
  using GradientFinal = std::function<void(int stage, std::size_t param_index)>;

  StageCompute(int rank, const Plan& plan, std::map<int, std::shared_ptr<Stage>> stages,
               std::vector<std::shared_ptr<Validator>> validators, LossFunction loss,
               bool scale_loss_by_microbatches, TargetCount count_targets,
               AwaitReceive await_receive, GradientFinal gradient_final);

  const std::map<int, std::shared_ptr<Stage>>& stages() const { return stages_; }
  bool holds(int stage) const { return stages_.count(stage) > 0; }
  bool holds_first_stage() const { return holds(0); }
  bool holds_last_stage() const { return holds(plan_.num_stages - 1); }

  // Set up: what each local stage takes and gives (from the metadata handshake).
  void set_metas(int stage, std::vector<TensorMeta> inputs, std::vector<TensorMeta> outputs);
  const std::vector<TensorMeta>& input_metas(int stage) const { return input_metas_.at(stage); }
  const std::vector<TensorMeta>& output_metas(int stage) const { return output_metas_.at(stage); }
  // Every local stage's, by stage.
  const std::map<int, std::vector<TensorMeta>>& input_metas() const { return input_metas_; }
  const std::map<int, std::vector<TensorMeta>>& output_metas() const { return output_metas_; }

  // A new step, whose inputs (first stage) and targets (last) come from `data`. With a
  // target count (token-mean losses), the last stage's rank takes every microbatch's targets
  // here and counts them (counted_targets()); the executor then sets the divisor.
  void begin_step(StepData data);
  bool counts_targets() const { return static_cast<bool>(count_targets_); }
  // This rank's microbatches' counted targets, this step.
  std::int64_t counted_targets() const { return counted_targets_; }
  // Token-mean losses: each microbatch's summed loss is multiplied by `scale` (the replicas
  // over the targets counted in the global batch) before its backward.
  void set_loss_scale(double scale) { loss_scale_ = scale; }
  // The step's loss: the mean over microbatches, or with a target count their scaled sums.
  double step_loss() const;
  // Runs F, B, I, W or OVERLAP_F_B.
  void run(const Action& action);
  // The tensors a SEND_F or SEND_B action sends (an input that got no gradient sends zeros).
  // The stage lets go of them: the send holds them from here on.
  std::vector<at::Tensor> outgoing(const Action& send);
  // Drops the step's autograd state.
  void end_step();

  // This replica's microbatch m is microbatch offset + m of the step (forward_seed.h).
  void set_global_microbatch_offset(int offset) { global_microbatch_offset_ = offset; }
  // The stages whose forward is run again before their backward (ExecutorOptions::
  // recompute_stages).
  void set_recompute_stages(std::set<int> stages) { recompute_stages_ = std::move(stages); }
  // What floating tensors cross ranks as (ExecutorOptions::wire, wire_dtype.h).
  void set_wire(WireDtype wire) { wire_ = wire; }
  // Forwards and losses under autocast on `device` at `dtype` (ExecutorOptions::autocast).
  void set_autocast(c10::Device device, std::optional<c10::ScalarType> dtype) {
    autocast_device_ = device;
    autocast_ = dtype;
  }

  // The step's losses, read from the device once, at its end: on a GPU each read is a
  // synchronisation, so the microbatches' losses stay tensors until the step is done.
  void read_losses();
  const std::vector<double>& microbatch_losses() const { return microbatch_losses_; }
  int peak_activations() const { return peak_activations_; }
  // What this rank's stages hold for their microbatches now, read from the tensors themselves
  // (not from the plan): an autograd graph, only the inputs (recomputing), or what W reads.
  KeptTally kept_in_memory() const;

 private:
  // Autograd state of one (stage, microbatch) between its forward and its backward.
  struct MicrobatchState {
    std::vector<at::Tensor> inputs;       // leaves; differentiable ones require grad (s > 0)
    std::vector<at::Tensor> outputs;      // with autograd history
    at::Tensor loss;                      // last stage: scaled loss
    std::vector<at::Tensor> input_grads;  // after B or I
    std::unique_ptr<SplitBackward> split;
    at::Tensor targets;  // last stage, recomputed: the microbatch's targets, for the replay
    // What it keeps (kInputs: recomputed, the graph is built again before the backward) and
    // what has happened to it (a bit per Event), as action_rules.h's table says.
    Kept kept = Kept::kNothing;
    std::uint8_t made = 0;
    bool has(Event event) const { return (made >> static_cast<int>(event)) & 1u; }
  };

  int last_stage() const { return plan_.num_stages - 1; }
  bool is_local(int stage) const;
  Stage& stage(int index);
  MicrobatchState& state(int stage, int microbatch) { return states_[{stage, microbatch}]; }

  // Throws unless everything `action` needs on this rank has happened (action_rules.h); what
  // it needs from another rank comes through await_receive.
  void require_needs(const Action& action);
  // After F, B, I or W: what it made, and what its stage keeps now.
  void record(const Action& action);
  // What a microbatch's stage keeps now, counted in kept_ (and the peak).
  void set_kept(MicrobatchState& st, Kept kept);
  void forward(int s, int mb);
  // The last stage's loss of microbatch mb, scaled for its backward; `record` adds it to the
  // step's figures (the first forward does, a replay does not).
  at::Tensor scaled_loss(int mb, const std::vector<at::Tensor>& outputs, const at::Tensor& targets,
                         bool record);
  // Recomputation: runs stage s's forward of mb again, with the graph, before its backward.
  void replay_forward(int s, int mb);
  // Seeds the default generator for stage s's forward of microbatch mb (forward_seed.h).
  void seed_forward(int s, int mb);
  void backward_roots(int s, int mb, std::vector<at::Tensor>* roots,
                      std::vector<at::Tensor>* grads);
  void full_backward_action(int s, int mb);
  void backward_input_action(int s, int mb);
  void backward_weight_action(int s, int mb);
  void finish_backward(int s, int mb, std::vector<at::Tensor> input_grads);
  void release_autograd(MicrobatchState& state);
  std::vector<at::Tensor> stage_parameters(int s);

  // The one path every tensor check takes: each validator that wants `role` sees `tensor`.
  void check(const at::Tensor& tensor, const TensorMeta& meta, int s, int mb, TensorRole role,
             int index) const;
  // Checks a stage's inputs or outputs, which must be as many as `metas`.
  void check_all(const std::vector<at::Tensor>& tensors, const std::vector<TensorMeta>& metas,
                 int s, int mb, TensorRole role) const;

  int rank_;
  const Plan& plan_;
  std::map<int, std::shared_ptr<Stage>> stages_;
  std::vector<std::shared_ptr<Validator>> validators_;
  LossFunction loss_function_;
  bool scale_loss_by_microbatches_;
  TargetCount count_targets_;
  AwaitReceive await_receive_;
  GradientFinal gradient_final_;
  std::map<int, std::vector<TensorMeta>> input_metas_;
  std::map<int, std::vector<TensorMeta>> output_metas_;
  int global_microbatch_offset_ = 0;
  std::set<int> recompute_stages_;
  c10::Device autocast_device_{c10::kCPU};
  std::optional<c10::ScalarType> autocast_;
  WireDtype wire_;

  // Per step.
  std::map<std::pair<int, int>, MicrobatchState> states_;
  StepData data_;
  // The losses as computed (sums over counted targets, or means), with their microbatch, in
  // the order they ran; read_losses() turns them into microbatch_losses_.
  std::vector<std::pair<int, at::Tensor>> recorded_losses_;
  std::vector<double> microbatch_losses_;  // unscaled (means)
  // Token-mean losses: the step's targets, taken at its start, their count, and the scale.
  std::vector<at::Tensor> targets_;
  std::vector<std::int64_t> target_counts_;  // per microbatch
  std::int64_t counted_targets_ = 0;
  double loss_scale_ = 1.0;
  double scaled_loss_sum_ = 0.0;
  KeptTally kept_;  // this step's microbatches by what their stage keeps (the plan's view)
  int peak_activations_ = 0;
};

}  // namespace baton
