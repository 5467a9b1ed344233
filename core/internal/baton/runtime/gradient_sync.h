// The one owner of a step's gradient synchronisation — the role of Megatron's
// finalize_model_grads and of DDP's Reducer. After (and, for the replicas' buckets, during)
// a rank's backwards, in this order:
//   1. buckets: each stage's gradients averaged over the replicas of its pipeline rank,
//      started inside the stage's last backward, waited for at the step's end;
//   2. ties: each tied tensor's copies summed over their holders (and averaged over the
//      replicas), so every copy takes the same update;
//   3. unscale (fp16 loss scaling): every gradient divided by the step's loss scale, and
//      whether any is non-finite agreed by the whole world, so every rank skips it together;
//   4. norm: the whole model's gradient norm, over the pipeline's ranks, a tied tensor once;
//   5. loss: the step's loss averaged over the replicas.
// Every collective goes through one group set (SyncGroups): one place joins groups and one
// error says when the transport has no all-reduce; every tensor the sync makes lives on the
// rank's device (NCCL refuses CPU tensors), and a step's scalars are read back once each.
// The executor only raises the events below; a forward-only plan (evaluation) has no sync.
// Low-precision parameters (precision.params: bf16) fold each microbatch's gradient into a
// float32 one here too (Megatron's main_grad), and the parts above read that one. Sharded
// optimizer state (reduce-scatter instead of all-reduce) attaches here, behind the same
// events.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "baton/error.h"
#include "baton/export.h"
#include "baton/topology.h"

namespace baton {

class AllReduceTransport;
class Stage;
class StepSpans;
struct Plan;

// A tensor the model holds under several names (tied weights: a GPT's head and its token
// embedding), and the stage of the plan that holds each name.
struct TiedParameter {
  std::vector<std::string> names;  // full-model names, as the stages' named_parameters() say
  std::vector<int> stages;         // the stage holding names[i]
};

struct GradientSyncOptions {
  // The transport's all-reduce, where its plugin lists baton.all_reduce
  // (baton::transport_interfaces). Null: it has none, and a run that needs one (replicas,
  // ties across ranks, the norm over several ranks) is refused at set-up.
  AllReduceTransport* all_reduce = nullptr;
  // The replicas' gradients travel in buckets of at most this many bytes (the first: 1 MiB).
  std::int64_t bucket_bytes = std::int64_t{25} << 20;
  // precision.reduce: the dtype floating gradients are all-reduced in across the replicas
  // (bf16: each bucket cast once before the sum, the average taken back in the gradient's
  // own dtype). Empty: the gradient's dtype. Tied weights' sums and the norm stay float32.
  std::optional<c10::ScalarType> reduce_dtype;
  // Measure the L2 norm of the whole model's gradient at the end of each step (for clipping
  // it), after the replicas' average. Parameters named in `norm_counted_elsewhere` are left
  // out: another rank counts their copy.
  bool measure_norm = false;
  std::set<std::string> norm_counted_elsewhere;
  // Tied weights: every rank holding one of a tie's names keeps its own copy; at the end of
  // each step every copy's gradient becomes the sum over the holders, averaged over the
  // replicas. The same list, in the same order, on every rank.
  std::vector<TiedParameter> tied_parameters;
  // Low-precision parameters: pairs of (a stage's parameter, its float32 master). After each
  // backward that reaches the parameter (its accumulator's hook, or W), the parameter's
  // gradient is added into the master's .grad (Megatron's main_grad) and the parameter's own
  // dropped; the replicas' buckets, the tied sums and the norm then read the masters'.
  std::vector<std::pair<at::Tensor, at::Tensor>> main_gradients;
  // fp16 loss scaling (torch.cuda.amp.GradScaler): the gradients arrive multiplied by the
  // step's loss scale (StepData::loss_scale). After the replicas' and the ties' sums they are
  // multiplied by 1 / scale and checked for infs and nans; every rank of the world agrees on
  // the check in one all-reduce (SyncResult::nonfinite), and the norm is the unscaled one's.
  bool loss_scaling = false;
  // For tests (BATON_INJECT_FAILURE by=inf|nan): every parameter's gradient is handed to the
  // sync after each backward, so that inject_nonfinite() can reach it before anything reads it.
  bool hook_every_gradient = false;
};

// Where the rank sits and where its tensors live.
struct SyncPlace {
  Topology topology;
  int replica = 0;
  int pipeline_rank = 0;
  c10::Device device{c10::kCPU};
  std::chrono::milliseconds timeout{60000};
};

// What a step's synchronisation leaves for the trainer, which clips and steps with it.
struct SyncResult {
  double exposed_seconds = 0.0;  // waited at the step's end for the replicas' buckets
  bool has_norm = false;
  double norm = 0.0;  // the whole model's gradient norm, the same on every rank
  double loss = 0.0;  // the loss given to finish(), averaged over the replicas
  // GradientSyncOptions::loss_scaling: some gradient of some rank was an inf or a nan (the
  // same on every rank); the norm is then not measured.
  bool nonfinite = false;
};

// A failed synchronisation, with the plan step to annotate it at (the one that started the
// collective, or the rank's last), and what was being synchronised in its message.
class SyncFailure : public Error {
 public:
  SyncFailure(int timestep, const std::string& message) : Error(message), timestep_(timestep) {}
  int timestep() const { return timestep_; }

 private:
  int timestep_;
};

// The L2 norm's square of `params`' gradients, as torch.nn.utils.clip_grad_norm_ takes it:
// each tensor's norm in its own dtype (one kernel for all), their squares summed in double.
// One element on `device`, left there (reading it is a synchronisation on a GPU); a parameter
// without a gradient counts 0.
BATON_API at::Tensor gradient_squares(const std::vector<at::Tensor>& params, c10::Device device);

// Low-precision parameters (Megatron's main_grad): `param`'s gradient added into `master`'s
// float32 .grad (a float32 copy when it has none) and dropped. No-op when `param` has none.
BATON_API void fold_into_master(const at::Tensor& param, const at::Tensor& master);

class BATON_API GradientSync {
 public:
  GradientSync(SyncPlace place, GradientSyncOptions options, StepSpans& spans);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Set up, on every rank, after the stages' shapes are agreed: joins the groups the run
  // needs (ties, replicas, the pipeline's norm: the same order on every rank) and allocates
  // the replicas' buckets. Throws Error (no all-reduce, a tie naming a missing parameter).
  void join(const Plan& plan, const std::map<int, std::shared_ptr<Stage>>& stages);

  // True when gradients (and losses, and target counts) are averaged over replicas.
  bool averages_replicas() const;

  // ---- the events of a step, in the order the executor raises them ------------------------
  // `loss_scale`: the factor the step's backward starts from (GradientSyncOptions::loss_scaling).
  void begin_step(double loss_scale = 1.0);
  // Token-mean losses: the targets counted over every replica's batch, from this rank's.
  // Throws SyncFailure (timestep 0).
  std::int64_t sum_targets(std::int64_t counted);
  // Around the compute action at plan step `timestep`: the stages whose last backward of the
  // step it is hand over their final gradients while it runs.
  void before_compute(int timestep);
  void after_compute();
  // Parameter `param_index` (of named_parameters()) of `stage` has its gradient of one
  // backward (its accumulator's hook, B) or of one W: folded into its master's where it has
  // one, and handed to the replicas' buckets in the stage's last backward of the step.
  void gradient_final(int stage, std::size_t param_index);
  // REDUCE_GRAD of `stage` at plan step `timestep`: starts what the backward did not.
  void post(int stage, int timestep);
  // Notes the collectives that finished (for the observers' spans).
  void poll();
  // After the plan's last action: buckets, ties, norm, loss, in that order. `loss`: the
  // step's loss where this rank has one. Throws SyncFailure, at `last_timestep` unless a
  // collective started earlier.
  SyncResult finish(int last_timestep, std::optional<double> loss);

  // For tests: every gradient of `stage` that the compute action about to run hands over is
  // overwritten with `value` (an inf or a nan: an fp16 overflow) before anything reads it.
  // Lasts until after_compute().
  void inject_nonfinite(int stage, double value);

  // Tied weights: every holder's copy has the same bytes (a checksum of each, compared among
  // the holders). Throws Error naming the tensor otherwise.
  void check_tied_copies();

 private:
  struct Parts;
  void hook_accumulators(const std::map<int, std::shared_ptr<Stage>>& stages);
  SyncPlace place_;
  GradientSyncOptions options_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace baton
