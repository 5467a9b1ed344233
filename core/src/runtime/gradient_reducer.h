// Internal: data parallelism's gradient reduction for this rank's stages — the role of
// PyTorch DDP's Reducer. At set-up it joins the group of this pipeline rank's replicas and
// gathers each stage's gradients into preallocated buckets; at each REDUCE_GRAD of the plan it
// copies the stage's gradients in and starts the buckets' all-reduces, which run beside the
// rank's work; at the step's end it waits for them and hands every parameter its gradient
// averaged over the replicas. It averages the loss the same way.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/plan/plan.h"
#include "baton/stage.h"
#include "baton/transport.h"
#include "step_spans.h"

namespace baton {

class AllReduceTransport;

// An all-reduce that failed, with the plan step that posted it (the executor names it).
class ReductionFailure : public Error {
 public:
  ReductionFailure(int timestep, const std::string& message)
      : Error(message), timestep_(timestep) {}
  int timestep() const { return timestep_; }

 private:
  int timestep_;
};

class GradientReducer {
 public:
  GradientReducer(int pipeline_rank, int pipeline_ranks, int replica, int replicas,
                  std::int64_t bucket_bytes, std::chrono::milliseconds timeout, StepSpans& spans);
  ~GradientReducer();

  // True once join() found something to reduce: more than one replica and a plan that
  // reduces gradients.
  bool active() const { return transport_ != nullptr; }

  // Set up (every rank of the replicas' group calls it): joins the group and allocates the
  // buckets of `stages`. Does nothing with one replica or a plan without REDUCE_GRAD.
  void join(Transport* transport, const Plan& plan,
            const std::map<int, std::shared_ptr<Stage>>& stages);

  void begin_step();
  // REDUCE_GRAD of `stage` at plan step `timestep`: copies its gradients into its buckets and
  // starts their all-reduces.
  void post(int stage, int timestep);
  // Notes the running all-reduces that finished (for the observers' reduction spans).
  void poll();
  // Waits for the step's all-reduces and averages the gradients. Returns the seconds waited
  // (the reduction not hidden behind the rank's work). Throws ReductionFailure.
  double finish();
  // The mean of `loss` over the replicas (each replica's is a mean already).
  double average_loss(double loss);

 private:
  // Some of a stage's gradients, of one dtype, gathered in one preallocated flat tensor that
  // is all-reduced as a whole (one message per bucket, not per parameter).
  struct Bucket {
    std::vector<at::Tensor> params;
    std::vector<std::int64_t> offsets;  // of each parameter's gradient in `flat`
    at::Tensor flat;
  };
  // A bucket's all-reduce under way, and the plan step that posted it (for errors).
  struct Pending {
    Bucket* bucket;
    std::unique_ptr<Work> work;
    int stage;
    int timestep;
    double posted_at;
    double completed_at;  // when this rank saw it done; -1 while it runs
  };

  void allocate_buckets(const std::map<int, std::shared_ptr<Stage>>& stages);

  int pipeline_rank_;
  int pipeline_ranks_;
  int replica_;
  int replicas_;
  std::int64_t bucket_bytes_;
  std::chrono::milliseconds timeout_;
  StepSpans& spans_;
  AllReduceTransport* transport_ = nullptr;  // set by join() when there is work
  int group_ = -1;
  std::map<int, std::vector<Bucket>> buckets_;  // by stage
  std::vector<Pending> pending_;                // this step's
};

}  // namespace baton
