// Internal: data parallelism's gradient reduction for this rank's stages — the role of
// PyTorch DDP's Reducer. At set-up it joins the group of this pipeline rank's replicas, gathers
// each stage's gradients into preallocated buckets (in reverse order of the parameters, the
// order the backward finishes them; the first bucket small). During a stage's last backward
// of the step, each parameter whose gradient is final (GradientSync's accumulator hook, or W) is
// copied into its bucket, and a bucket whose gradients are all final starts its all-reduce there
// and then (buckets start in order, so every replica posts the same collectives in the same order);
// the plan's REDUCE_GRAD starts the buckets that are left. At the step's end it waits for them and
// hands every parameter its gradient averaged over the replicas. One of GradientSync's parts
// (baton/runtime/gradient_sync.h).
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

#include "baton/plan/plan.h"
#include "baton/runtime/gradient_sync.h"
#include "baton/runtime/step_spans.h"
#include "baton/stage.h"
#include "baton/transport.h"
#include "main_gradients.h"
#include "sync_groups.h"

namespace baton {

class GradientReducer {
 public:
  // `reduce_dtype`: what floating gradients travel as (GradientSyncOptions::reduce_dtype).
  GradientReducer(int pipeline_rank, int replicas, std::int64_t bucket_bytes,
                  std::optional<c10::ScalarType> reduce_dtype, SyncGroups& groups,
                  StepSpans& spans);
  ~GradientReducer();

  // True once join() was given the replicas' group.
  bool active() const { return group_ >= 0; }

  // Set up (every rank of the replicas' group calls it): allocates the buckets of the
  // gradients `holders` keep, to be averaged over `replicas_group` (joined), but for the
  // parameters named in `left_out` (tied weights, which TiedGradients averages with their
  // other copies).
  void join(int replicas_group, const Plan& plan, const GradientHolders& holders,
            const std::set<std::string>& left_out);

  void begin_step();
  // Around the compute action at plan step `timestep`: the stages whose last backward of the
  // step it is listen for their parameters' final gradients while it runs.
  void before_compute(int timestep);
  void after_compute();
  // The parameter `param_index` (of named_parameters()) of `stage` has its final gradient of
  // the step: from its accumulator's hook (B) or from W.
  void gradient_final(int stage, std::size_t param_index);
  // REDUCE_GRAD of `stage` at plan step `timestep`: starts the all-reduces of its buckets not
  // started yet.
  void post(int stage, int timestep);
  // Notes the running all-reduces that finished (for the observers' reduction spans).
  void poll();
  // Waits for the step's all-reduces and averages the gradients. Returns the seconds waited
  // (the reduction not hidden behind the rank's work). Throws SyncFailure.
  double finish();

 private:
  // Some of a stage's gradients, of one dtype, gathered in one preallocated flat tensor that
  // is all-reduced as a whole (one message per bucket, not per parameter), in the reduce
  // dtype when one is set.
  struct Bucket {
    std::vector<at::Tensor> params;
    std::vector<std::int64_t> offsets;  // of each parameter's gradient in `flat`
    at::Tensor flat;
    // Frozen parameters: no gradient, no hook; their zeros are in `flat` from the start.
    std::vector<bool> frozen;
    std::size_t frozen_count = 0;
    // This step's: which gradients are in `flat` already, and whether it was started.
    std::vector<bool> copied;
    std::size_t copied_count = 0;
    bool started = false;
  };
  // Where a stage's parameter (by its index in named_parameters()) sits; `bucket` kLeftOut:
  // in none.
  static constexpr std::size_t kLeftOut = static_cast<std::size_t>(-1);
  struct Slot {
    std::size_t bucket;
    std::size_t index;
  };
  // A bucket's all-reduce under way, and the plan step that posted it (for errors).
  struct Pending {
    Bucket* bucket;
    std::unique_ptr<Work> work;
    int stage;
    int timestep;
    bool at_reduce_grad;  // started by the plan's REDUCE_GRAD, not in the last backward
    double posted_at;
    double completed_at;  // when this rank saw it done; -1 while it runs
  };

  // What a gradient of this dtype is all-reduced as.
  c10::ScalarType travelling_dtype(c10::ScalarType gradient) const;
  void allocate_buckets(const GradientHolders& holders);
  // Per stage, the plan step of its last backward (B, I or W) before its REDUCE_GRAD.
  void find_last_backwards(const Plan& plan);
  void copy_gradient(Bucket& bucket, std::size_t index);
  void start(int stage, Bucket& bucket, int timestep, bool at_reduce_grad);
  // "stage 1's gradients (bucket 2 of 3", for errors.
  std::string bucket_text(int stage, const Bucket& bucket) const;
  // Starts the stage's next buckets, in order, while their gradients are all copied.
  void start_complete_buckets(int stage);

  int pipeline_rank_;
  int replicas_;
  std::int64_t bucket_bytes_;
  std::optional<c10::ScalarType> reduce_dtype_;
  SyncGroups& groups_;
  StepSpans& spans_;
  std::set<std::string> left_out_;
  int group_ = -1;                              // the replicas', set by join() when there is work
  std::map<int, std::vector<Bucket>> buckets_;  // by stage, in the order they start
  std::map<int, std::vector<Slot>> slots_;      // by stage, by parameter index
  std::map<int, std::size_t> next_bucket_;      // by stage: the first not started
  std::map<int, std::vector<int>> last_backward_of_;  // by plan step: stages it finishes
  std::set<int> listening_;                           // stages in their last backward
  int listening_timestep_ = -1;
  std::vector<Pending> pending_;  // this step's
};

}  // namespace baton
