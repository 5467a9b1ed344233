// Internal: the transfers of one step on one rank. It posts each run of adjacent SEND/RECV
// actions as one batch, decides when the step's receives go out (the receive-posting
// policy), waits for a receive right before the compute that needs it, lets go of a send's
// data as soon as it completed, and at the step's end waits for every send and checks that
// no receive went unused. Every posted operation carries its own destination, so a batch's
// results are handed out without index arithmetic.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "baton/plan/plan.h"
#include "baton/runtime/recv_buffers.h"
#include "baton/tensor_meta.h"
#include "baton/transport.h"
#include "step_spans.h"

namespace baton {

class StepComms {
 public:
  // The tensors a SEND_F or SEND_B action sends (StageCompute::outgoing).
  using Outgoing = std::function<std::vector<at::Tensor>(const Action& send)>;

  // `rank_offset` turns a plan rank into a rank on the transport (data parallelism: the
  // replica's first rank). `transport` may be null when the plan has no communication.
  // `receives_match_by_tag`: the transport's kCapabilityReceivesMatchByTag.
  StepComms(int rank, const Plan& plan, int rank_offset, std::shared_ptr<Transport> transport,
            bool receives_match_by_tag, std::chrono::milliseconds timeout, StepSpans& spans);

  Transport* transport() const { return transport_.get(); }
  int transport_rank(int pipeline_rank) const { return rank_offset_ + pipeline_rank; }

  // Set up: one buffer set per receive of the plan, from the stages' exchanged metadata.
  void allocate_buffers(const std::map<int, std::vector<TensorMeta>>& input_metas,
                        const std::map<int, std::vector<TensorMeta>>& output_metas);
  const RecvBuffers& buffers() const { return buffers_; }

  void begin_step(int training_step);
  // Posts `run` (adjacent SEND/RECV actions of the plan) as one batch, and the step's
  // receives with it when the policy says it is time.
  void post_run(const std::vector<Action>& run, const Outgoing& outgoing);
  // Waits for `receive` (RECV_F or RECV_B) and returns its buffers. Throws unless an earlier
  // step of the plan posted it; `before_wait` (may be empty) runs once it is known to be.
  const std::vector<at::Tensor>& await(const Action& receive,
                                       const std::function<void()>& before_wait);
  // Drops the data of the sends that completed, oldest first.
  void release_completed_sends();
  // Waits for every send of the step; throws if a posted receive was never used.
  void finish_step();
  void end_step();

 private:
  using ReceiveKey = std::tuple<int, int, int>;  // stage, microbatch, FlowDirection
  struct InFlightSend {
    at::Tensor data;
    std::unique_ptr<Work> work;
  };
  // Where the result of one operation of a batch goes: a send keeps its data alive until
  // it completes; a receive joins the pending ones of its key.
  struct Destination {
    bool receive = false;
    ReceiveKey key;   // a receive's (stage, microbatch, direction)
    at::Tensor data;  // a send's tensor
  };

  static ReceiveKey key_of(const Action& receive);
  int rank_of(int stage) const { return plan_.stage_to_rank.at(static_cast<std::size_t>(stage)); }
  Transport& require_transport();
  void post(const std::vector<Action>& actions, const Outgoing& outgoing);
  void post_step_receives();

  int rank_;
  const Plan& plan_;
  int rank_offset_;
  std::shared_ptr<Transport> transport_;
  std::chrono::milliseconds timeout_;
  StepSpans& spans_;
  RecvBuffers buffers_;
  // The transport matches receives by tag: every receive of a step is posted at once.
  bool receives_match_by_tag_ = false;
  std::vector<Action> step_receives_;  // this rank's RECV actions, in plan order

  // Per step.
  int training_step_ = 0;
  bool receives_posted_ = false;
  std::map<ReceiveKey, std::vector<std::unique_ptr<Work>>> pending_receives_;
  // Sends in posting order, each with its data, which stays alive until the send completes
  // (then it is released at once: a step of many microbatches does not hold them all).
  std::deque<InFlightSend> sends_;
};

}  // namespace baton
