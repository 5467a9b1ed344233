// Runs this rank's part of a lowered plan on real stages and a real transport.
//
// setup() performs the metadata handshake — each stage learns its input shapes and dtypes
// (stage 0 from the real batch, later stages from the previous stage's output metadata,
// exchanged over the transport), runs shape inference, and tells the previous stage whether
// it can take what it produces — and then preallocates every receive buffer the plan needs.
// run_step() splits the batch, runs the plan action by action (receives posted early, waited
// for right before the compute that needs them; adjacent communication posted as one batch),
// and leaves the gradients in the stages' parameters for the optimizer.
//
// The executor is a short loop over parts with one job each (docs/architecture.md): the
// step's transfers (StepComms), the stages' computations (StageCompute), the gradients'
// synchronisation (GradientSync: replicas, ties, the norm, the loss's average), and the
// observers that listen to its spans.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/plan/plan.h"
#include "baton/runtime/gradient_sync.h"
#include "baton/runtime/recv_buffers.h"
#include "baton/runtime/step_observer.h"
#include "baton/stage.h"
#include "baton/tensor_meta.h"
#include "baton/transport.h"
#include "baton/validator.h"

namespace baton {

// Loss of the last stage for one microbatch: (stage outputs, targets) -> scalar.
using LossFunction =
    std::function<at::Tensor(const std::vector<at::Tensor>& outputs, const at::Tensor& targets)>;

// Token-mean losses: how many targets of a microbatch the loss counts (cross entropy: those
// not equal to its ignore_index). See ExecutorOptions::count_targets.
using TargetCount = std::function<std::int64_t(const at::Tensor& targets)>;

// A step's data, one microbatch at a time, asked for when the plan reaches it: the inputs at
// the first stage's forward, the targets at the last stage's loss. A rank then holds no more
// of a batch than its schedule keeps in flight, however many microbatches a step has. Called
// on the thread that runs the step, each at most once per microbatch.
struct StepData {
  std::function<std::vector<at::Tensor>(int microbatch)> inputs;  // on the first stage's rank
  std::function<at::Tensor(int microbatch)> targets;              // on the last stage's rank
  // Randomness inside the stages (dropout): when set, each stage's forward of a microbatch
  // draws from the default CPU generator seeded with forward_seed(*random_seed, stage, global
  // microbatch) (baton/runtime/forward_seed.h), so the step's masks do not depend on the
  // schedule, the placement or the replicas. Unset: the generator is left as it is.
  std::optional<std::uint64_t> random_seed;
  // fp16 loss scaling (torch.cuda.amp.GradScaler): the backward starts from the loss times
  // this, so every gradient arrives multiplied by it; with ExecutorOptions::gradients
  // .loss_scaling the sync divides them back before the norm (StepResult::nonfinite_gradients).
  double loss_scale = 1.0;
};

// The microbatches of a batch held whole: `inputs` and `targets` split along `split_dim` into
// `microbatches` equal chunks (split_microbatches() says when they cannot be). An undefined
// `targets` or empty `inputs` gives a StepData without that part.
BATON_API StepData whole_batch(const std::vector<at::Tensor>& inputs, const at::Tensor& targets,
                               int microbatches, int split_dim = 0);

// Fail when this rank reaches `action` in training step `step` — a compute action ("1B2"),
// REDUCE_GRAD, or a receive ("1RECV_F2"), at the moment the action that needs it waits for
// it. Empty: off. `signal` 0 throws an error there; a signal number raises that signal
// instead (SIGKILL: a crash, SIGSTOP: a rank that hangs mid-wait). `nonfinite_gradients`
// set: nothing fails; the gradients the action (a backward, or W) computes for its stage's
// parameters are overwritten with that value (an inf or a nan: an fp16 overflow) before the
// synchronisation reads them.
struct InjectedFault {
  std::string action;
  int step = 0;
  int signal = 0;
  std::optional<double> nonfinite_gradients;
};

struct ExecutorOptions {
  std::chrono::milliseconds timeout{60000};
  // Where this rank's stages live (world.device), and so its tensors: receive buffers are
  // allocated here (the setup handshake exchanges shapes and dtypes, never devices), the
  // step's inputs and targets are moved here, and the setup messages travel from here. The
  // stages must already be on it.
  c10::Device device{c10::kCPU};
  // Divide each microbatch's loss by the number of microbatches, so the accumulated
  // gradient equals the gradient of the mean loss over the whole batch (what the
  // unpipelined model computes). Turn off to get the sum.
  bool scale_loss_by_microbatches = true;
  // Token-mean losses, as PyTorch's cross_entropy(ignore_index=...) on the whole batch: when
  // set, `loss` returns the SUM over a microbatch's counted targets, and the step's loss and
  // gradients are that sum over every microbatch of every replica divided by the number of
  // targets counted in all of them (the last stage's rank takes the step's targets at its
  // start; with replicas, one all-reduce of the count among the last stage's replicas). Then
  // microbatches may count different numbers of targets and the result is still exact
  // (scale_loss_by_microbatches is ignored). A step with no counted target has loss 0, no
  // gradient, and StepResult::counted_targets 0.
  TargetCount count_targets;
  // Batch dimension of every input and of the targets, where a whole batch is given (the
  // overloads of setup() and run_step() that split one).
  int split_dim = 0;
  // The transport's plugin lists baton.receives_match_by_tag (baton/plugin.h): a step's
  // receives are posted ahead of the plan, from the rank's first communication of the step,
  // as receive buffers free. Off: each when the plan says.
  bool receives_match_by_tag = false;
  // What each stage of the plan holds ("stage-1.pt", "layers.2 .. head"), for setup
  // messages that name both sides of a boundary; empty: stages are named by index and rank.
  std::vector<std::string> stage_names;
  // Fault injection, for testing failure handling end to end (see InjectedFault).
  InjectedFault fault;
  // Who hears what ran during each step (traces, benches); none: no span is built.
  std::vector<std::shared_ptr<StepObserver>> observers;
  // Data parallelism (docs/runtime.md): this pipeline is replica `replica` of `replicas`, and
  // its ranks are replica x plan ranks + pipeline rank on the transport. With more than one
  // replica, each REDUCE_GRAD of the plan sums the stage's gradients across the replicas, in
  // buckets, while the rank goes on; run_step() waits for them at its end and divides by
  // `replicas`, so the gradients are those of the mean loss over the global batch, and so is
  // the loss.
  int replica = 0;
  int replicas = 1;
  // The step's gradient synchronisation (baton/runtime/gradient_sync.h): the transport's
  // all-reduce, the replicas' buckets, tied weights, the gradient norm. A plan that computes
  // no gradient (forward only: evaluation) has none, and these are not used.
  GradientSyncOptions gradients;
  // Activation recomputation: each stage listed runs its forward without keeping the autograd
  // graph — it keeps only its inputs, and draws the same randomness again through
  // forward_seed() — and runs it once more, with the graph, right before the microbatch's
  // backward (B, or I on split-backward schedules; W then uses that graph). A BatchNorm's
  // statistics are updated by the first forward only. Gradients, weights and losses are
  // bit-identical to a run without it; the cost is one more forward of the stage.
  std::set<int> recompute_stages;
  // precision.compute: every stage's forward (its recomputation and the set-up's probe too)
  // and the loss run under autocast at this dtype for `device`, as PyTorch's
  // torch.autocast; the parameters and their gradients stay float32. Empty: float32.
  std::optional<c10::ScalarType> autocast;
  // precision.wire: the dtype floating activations and their gradients cross ranks in, cast
  // for the transfer and back on arrival (the receive buffers are made in it). Empty: as the
  // stage produced them.
  std::optional<c10::ScalarType> wire;
};

struct StepResult {
  // Mean (or, unscaled, summed) loss of the step; only on the rank holding the last stage.
  bool has_loss = false;
  double loss = 0.0;
  std::vector<double> microbatch_losses;  // unscaled, per microbatch
  // Where this rank's time went (seconds): running stage computations, posting and waiting
  // for transfers; the rest of `step_seconds` is idle (bookkeeping, scheduling gaps).
  double step_seconds = 0.0;
  double compute_seconds = 0.0;
  double comm_seconds = 0.0;
  // Most stage-microbatches whose activations this rank held at once (from an F to the end
  // of its backward: B, or W when split) — what the plan simulator calls peak activations.
  int peak_activations = 0;
  // Data parallelism: seconds the step waited at its end for the gradient all-reduces (the
  // part not hidden behind the rank's other work).
  double exposed_reduce_seconds = 0.0;
  // ExecutorOptions::gradients.measure_norm: the whole model's gradient norm, the same on
  // every rank of the pipeline.
  bool has_grad_norm = false;
  double grad_norm = 0.0;
  // ExecutorOptions::gradients.loss_scaling: some gradient of some rank of the world was an
  // inf or a nan after unscaling (the same on every rank): the step is to be skipped, and
  // the norm was not measured.
  bool nonfinite_gradients = false;
  // ExecutorOptions::count_targets: the targets the loss counted over the whole global batch
  // (every microbatch of every replica); 0: not counted.
  std::int64_t counted_targets = 0;
};

class BATON_API PipelineExecutor {
 public:
  // `rank` is this rank's column of the plan (its pipeline rank); `stages` are its stages
  // (any order); `transport` may be null when the plan has no communication (one rank).
  PipelineExecutor(int rank, Plan lowered_plan, std::vector<std::shared_ptr<Stage>> stages,
                   std::shared_ptr<Transport> transport,
                   std::vector<std::shared_ptr<Validator>> validators, LossFunction loss,
                   ExecutorOptions options = {});
  ~PipelineExecutor();

  // Metadata handshake, receive-buffer and gradient-bucket preallocation, and, with several
  // replicas, joining the replicas' group. Stage 0 learns its input from the first microbatch
  // of `first_step` (only asked for on the rank of stage 0); every rank must call it.
  void setup(const StepData& first_step);
  // The same from this replica's whole batch.
  void setup(const std::vector<at::Tensor>& inputs);

  // Runs one step. `data.inputs` matter on the rank of stage 0, `data.targets` on the rank of
  // the last stage. Throws StepError annotated with the rank, timestep and action.
  StepResult run_step(const StepData& data);
  // The same from this replica's whole batch (split along ExecutorOptions::split_dim).
  StepResult run_step(const std::vector<at::Tensor>& inputs, const at::Tensor& targets);

  // Tied weights: every holder's copy has the same bytes (a checksum of each, compared among
  // the holders); every rank holding a copy calls it at the same step. Throws Error naming the
  // tensor otherwise.
  void check_tied_copies();

  const RecvBuffers& recv_buffers() const;
  const std::vector<TensorMeta>& input_metas(int stage) const;
  const std::vector<TensorMeta>& output_metas(int stage) const;
  int rank() const;
  const Plan& plan() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton
