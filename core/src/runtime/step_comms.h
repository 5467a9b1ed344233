// Internal: the transfers of one step on one rank. It posts each run of adjacent SEND/RECV
// actions as one batch, decides when the step's receives go out (the receive-posting
// policy) and into which receive buffers (slots reused across microbatches: recv_buffers.h),
// waits for a receive right before the compute that needs it, gives its buffers back after
// the last computation that reads them, lets go of a send's data as soon as it completed, and
// at the step's end waits for every send and checks that no receive went unused. Every posted
// operation carries its own destination, so a batch's results are handed out without index
// arithmetic.
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
#include "baton/runtime/step_spans.h"
#include "baton/tensor_meta.h"
#include "baton/transport.h"

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

  // Set up: the receive buffers of every (stage, direction) this rank receives, from the
  // stages' exchanged metadata, as many as the plan keeps in use at once plus a few posted
  // ahead.
  void allocate_buffers(const std::map<int, std::vector<TensorMeta>>& input_metas,
                        const std::map<int, std::vector<TensorMeta>>& output_metas);
  const RecvBuffers& buffers() const { return buffers_; }

  void begin_step(int training_step);
  // Posts `run` (adjacent SEND/RECV actions of the plan) as one batch, and the step's
  // receives with it when the policy says it is time.
  void post_run(const std::vector<Action>& run, const Outgoing& outgoing);
  // Waits for `receive` (RECV_F or RECV_B) and returns its buffers. Throws unless the plan
  // receives it (before this point, when receives are posted in plan order); `before_wait`
  // (may be empty) runs once it is known to be.
  const std::vector<at::Tensor>& await(const Action& receive,
                                       const std::function<void()>& before_wait);
  // The compute action at plan step `timestep` finished: the data of the sends that completed
  // is dropped (oldest first), the receive buffers the action read for the last time go back
  // to their pool, and receives waiting for a buffer are posted.
  void after_compute(int timestep);
  // Waits for every send of the step; throws if a posted receive was never used.
  void finish_step();
  void end_step();

 private:
  using ReceiveKey = std::tuple<int, int, int>;  // stage, microbatch, FlowDirection
  // The bytes a batch moves, for the observers' spans.
  struct BatchBytes {
    std::int64_t sent = 0;
    std::int64_t received = 0;
  };
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

  // One receive of the plan on this rank, and which computations read its buffers.
  struct PlannedReceive {
    Action action;        // RECV_F or RECV_B
    std::size_t queue;    // index in queues_
    std::size_t place;    // index in that queue's receives
    int step;             // plan step of the RECV action
    int first_read = -1;  // plan step of the computation that waits for it (-1: none)
    int last_read = -1;   // plan step of the last computation that reads it (-1: none)
  };
  // The receives of one (stage, direction), in plan order: posted in that order.
  struct ReceiveQueue {
    int stage;
    FlowDirection direction;
    std::vector<std::size_t> receives;  // indices in planned_
    std::size_t next = 0;               // per step: the first not yet posted
  };

  static ReceiveKey key_of(const Action& receive);
  Transport& require_transport();
  void plan_receives();
  BatchBytes post(const std::vector<Action>& actions, const Outgoing& outgoing);
  // Adds the operations of a receive into `slot` to a batch.
  void add_receive(const Action& receive, int slot, std::vector<P2POp>* ops,
                   std::vector<Destination>* destinations);
  BatchBytes post_batch(std::vector<P2POp>& ops, std::vector<Destination>& destinations);
  // Tag matching: posts, in order, every receive of the step that a free buffer can take.
  void post_ready_receives();
  // Tag matching: posts `queue`'s receives up to and including `index` (in queue.receives),
  // into new buffers if none is free, because a computation needs the last of them now.
  void post_through(ReceiveQueue& queue, std::size_t index);
  void give_back_all();

  int rank_;
  const Plan& plan_;
  int rank_offset_;
  std::shared_ptr<Transport> transport_;
  std::chrono::milliseconds timeout_;
  StepSpans& spans_;
  RecvBuffers buffers_;
  // The transport matches receives by tag: receives are posted ahead of the plan, as soon as
  // a buffer is free, from the rank's first communication of the step on.
  bool receives_match_by_tag_ = false;
  std::vector<PlannedReceive> planned_;  // this rank's receives, in plan order
  std::map<ReceiveKey, std::size_t> planned_index_;
  std::vector<ReceiveQueue> queues_;
  std::vector<std::vector<std::size_t>> last_read_at_;  // plan step -> receives read last there

  // Per step.
  int training_step_ = 0;
  bool communicating_ = false;         // the rank's first communication of the step has happened
  std::map<ReceiveKey, int> slot_of_;  // receives posted and not yet given back
  std::map<ReceiveKey, std::vector<std::unique_ptr<Work>>> pending_receives_;
  // Sends in posting order, each with its data, which stays alive until the send completes
  // (then it is released at once: a step of many microbatches does not hold them all).
  std::deque<InFlightSend> sends_;
};

}  // namespace baton
