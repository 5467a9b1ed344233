#include "step_comms.h"

#include <string>

#include "baton/error.h"
#include "baton/wait_notice.h"
#include "comm_tags.h"
#include "differentiable.h"

namespace baton {
namespace {

bool is_receive(ActionType type) {
  return type == ActionType::kRecvForward || type == ActionType::kRecvBackward;
}

FlowDirection direction_of(ActionType type) {
  return type == ActionType::kRecvForward || type == ActionType::kSendForward
             ? FlowDirection::kForward
             : FlowDirection::kBackward;
}

// What await() waits for, put into words only when a WaitNotice needs them.
struct AwaitedReceive {
  int stage, microbatch;
  bool forward;
  int sender_rank;
  int training_step;
  static std::string describe(const void* context) {
    const auto& self = *static_cast<const AwaitedReceive*>(context);
    const int sender = self.forward ? self.stage - 1 : self.stage + 1;
    return std::string(self.forward ? "the activations" : "the gradients") + " of stage " +
           std::to_string(sender) + ", microbatch " + std::to_string(self.microbatch) +
           " from rank " + std::to_string(self.sender_rank) + " (training step " +
           std::to_string(self.training_step) + ")";
  }
};

}  // namespace

StepComms::StepComms(int rank, const Plan& plan, int rank_offset,
                     std::shared_ptr<Transport> transport, bool receives_match_by_tag,
                     std::chrono::milliseconds timeout, StepSpans& spans)
    : rank_(rank),
      plan_(plan),
      rank_offset_(rank_offset),
      transport_(std::move(transport)),
      timeout_(timeout),
      spans_(spans),
      receives_match_by_tag_(receives_match_by_tag && transport_ != nullptr) {}

StepComms::ReceiveKey StepComms::key_of(const Action& receive) {
  return {receive.stage, receive.microbatch, static_cast<int>(direction_of(receive.type))};
}

Transport& StepComms::require_transport() {
  if (!transport_) throw Error("the plan communicates between ranks but no transport is set");
  return *transport_;
}

void StepComms::allocate_buffers(const std::map<int, std::vector<TensorMeta>>& input_metas,
                                 const std::map<int, std::vector<TensorMeta>>& output_metas) {
  for (const auto& slot : plan_.rank_steps.at(static_cast<std::size_t>(rank_))) {
    if (!slot || !is_receive(slot->type)) continue;
    step_receives_.push_back(*slot);
    if (slot->type == ActionType::kRecvForward) {
      buffers_.allocate(slot->stage, slot->microbatch, FlowDirection::kForward,
                        input_metas.at(slot->stage));
    } else {
      // Gradients come back only for the outputs that carry them.
      std::vector<TensorMeta> grads;
      for (const auto& meta : output_metas.at(slot->stage)) {
        if (is_differentiable(meta)) grads.push_back(meta);
      }
      buffers_.allocate(slot->stage, slot->microbatch, FlowDirection::kBackward, grads);
    }
  }
}

void StepComms::begin_step(int training_step) {
  training_step_ = training_step;
  receives_posted_ = false;
  pending_receives_.clear();
  sends_.clear();
}

void StepComms::end_step() {
  sends_.clear();
}

void StepComms::post(const std::vector<Action>& actions, const Outgoing& outgoing) {
  std::vector<P2POp> ops;
  std::vector<Destination> destinations;  // one per op
  for (const Action& action : actions) {
    const int s = action.stage, mb = action.microbatch;
    switch (action.type) {
      case ActionType::kSendForward:
      case ActionType::kSendBackward: {
        const bool forward = action.type == ActionType::kSendForward;
        // Activations are tagged by the sending stage, gradients by the receiving one.
        const int peer = transport_rank(rank_of(forward ? s + 1 : s - 1));
        const std::uint64_t tag = comm_tag(forward ? s : s - 1, mb, direction_of(action.type));
        for (at::Tensor& tensor : outgoing(action)) {
          ops.push_back({P2PDirection::kSend, tensor, peer, tag});
          destinations.push_back({false, {}, std::move(tensor)});
        }
        break;
      }
      case ActionType::kRecvForward:
      case ActionType::kRecvBackward: {
        const ReceiveKey key = key_of(action);
        if (pending_receives_.count(key)) break;  // posted early, with the step's receives
        const bool forward = action.type == ActionType::kRecvForward;
        const int peer = transport_rank(rank_of(forward ? s - 1 : s + 1));
        const std::uint64_t tag = comm_tag(forward ? s - 1 : s, mb, direction_of(action.type));
        for (const auto& buffer : buffers_.get(s, mb, direction_of(action.type))) {
          ops.push_back({P2PDirection::kRecv, buffer, peer, tag});
          destinations.push_back({true, key, {}});
        }
        break;
      }
      default:
        break;
    }
  }
  if (ops.empty()) return;
  std::vector<std::unique_ptr<Work>> works = require_transport().post_batch(ops);
  for (std::size_t i = 0; i < destinations.size(); ++i) {
    Destination& destination = destinations[i];
    if (destination.receive) {
      pending_receives_[destination.key].push_back(std::move(works[i]));
    } else {
      sends_.push_back({std::move(destination.data), std::move(works[i])});
    }
  }
}

// Every receive of the step is posted at once, at the rank's first communication of the step:
// before a run that receives, or right after a run that only sends (the first stage's first
// forward does not wait for them, and its first send goes first). Not later: transports such
// as Gloo move a message only once its receive is posted, so a rank that reached its first
// RECV only after a stage's forwards (looped BFS, interleaved and V schedules on rank 0) held
// its peer's outputs back that long.
void StepComms::post_step_receives() {
  receives_posted_ = true;
  try {
    const double posted_at = spans_.now();
    post(step_receives_, nullptr);
    spans_.add(SpanKind::kPostReceives, posted_at, spans_.now(), step_receives_);
  } catch (const std::exception& error) {
    throw Error(std::string("posting the step's receives: ") + error.what());
  }
}

void StepComms::post_run(const std::vector<Action>& run, const Outgoing& outgoing) {
  const bool post_receives_now =
      receives_match_by_tag_ && !step_receives_.empty() && !receives_posted_;
  bool receives = false;
  for (const Action& action : run) receives = receives || is_receive(action.type);
  // The step's receives (its own among them) go before a run that receives, right behind a
  // run that only sends.
  if (post_receives_now && receives) post_step_receives();
  const double posted_at = spans_.now();
  post(run, outgoing);
  spans_.add(SpanKind::kPostTransfers, posted_at, spans_.now(), run);
  if (post_receives_now && !receives) post_step_receives();
}

const std::vector<at::Tensor>& StepComms::await(const Action& receive,
                                                const std::function<void()>& before_wait) {
  const bool forward = receive.type == ActionType::kRecvForward;
  auto found = pending_receives_.find(key_of(receive));
  if (found == pending_receives_.end()) {
    throw Error(std::string("needs the ") + (forward ? "activations" : "gradients") + " of stage " +
                std::to_string(receive.stage) + ", microbatch " +
                std::to_string(receive.microbatch) +
                " from another rank, but no earlier step of the plan receives them");
  }
  if (before_wait) before_wait();
  const double waiting_since = spans_.now();
  {
    const int sender = forward ? receive.stage - 1 : receive.stage + 1;
    const AwaitedReceive awaited{receive.stage, receive.microbatch, forward,
                                 transport_rank(rank_of(sender)), training_step_};
    const WaitNotice notice("runtime", &AwaitedReceive::describe, &awaited);
    for (auto& work : found->second) work->wait(timeout_);
  }
  spans_.add(SpanKind::kWaitReceive, waiting_since, spans_.now(), receive);
  pending_receives_.erase(found);
  return buffers_.get(receive.stage, receive.microbatch, direction_of(receive.type));
}

void StepComms::release_completed_sends() {
  while (!sends_.empty() && sends_.front().work->test()) sends_.pop_front();
}

void StepComms::finish_step() {
  // Every send must complete before the step ends: the peer relies on it.
  const double draining_since = spans_.now();
  {
    const WaitNotice notice(
        "runtime",
        [](const void* step) {
          return "this rank's sends of training step " +
                 std::to_string(*static_cast<const int*>(step)) + " to be taken by their receivers";
        },
        &training_step_);
    for (auto& send : sends_) send.work->wait(timeout_);
  }
  spans_.add(SpanKind::kWaitSends, draining_since, spans_.now());
  if (!pending_receives_.empty()) {
    const ReceiveKey& key = pending_receives_.begin()->first;
    throw Error("the step ended with a posted receive never used (stage " +
                std::to_string(std::get<0>(key)) + ", microbatch " +
                std::to_string(std::get<1>(key)) + ")");
  }
}

}  // namespace baton
