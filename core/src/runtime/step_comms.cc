#include "step_comms.h"

#include <algorithm>
#include <string>

#include "baton/error.h"
#include "baton/plan/action_rules.h"
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

// A pool holds the buffers the plan keeps in use at once plus these: the next receives, posted
// ahead (a transport such as Gloo moves a message only once its receive is posted), and room
// for a buffer still held by a send that has not completed.
constexpr int kSpareSlots = 2;

// Which receives this rank makes, in plan order, and for each the plan steps of the
// computations that read it: its consumer (F for activations, B or I for gradients) and the
// last of its (stage, microbatch)'s computations (B, or W: autograd keeps the inputs to then).
void StepComms::plan_receives() {
  const auto& steps = plan_.rank_steps.at(static_cast<std::size_t>(rank_));
  std::map<ReceiveKey, int> first_read;
  std::map<std::pair<int, int>, int> last_compute;  // (stage, microbatch) -> plan step
  const auto note_compute = [&](const Action& action, int t) {
    if (!is_compute(action.type) || action.microbatch < 0) return;
    // The receives it waits for, as action_rules.h's table says.
    for (const Need& need : needs_of(plan_, action)) {
      if (need.event == Event::kReceivedForward) {
        first_read.emplace(
            ReceiveKey{need.stage, need.microbatch, static_cast<int>(FlowDirection::kForward)}, t);
      } else if (need.event == Event::kReceivedBackward) {
        first_read.emplace(
            ReceiveKey{need.stage, need.microbatch, static_cast<int>(FlowDirection::kBackward)}, t);
      }
    }
    last_compute[{action.stage, action.microbatch}] = t;
  };
  for (std::size_t t = 0; t < steps.size(); ++t) {
    const PlanSlot& slot = steps[t];
    if (!slot) continue;
    if (is_receive(slot->type)) {
      const ReceiveKey key = key_of(*slot);
      if (planned_index_.count(key)) continue;  // validation refuses a receive made twice
      planned_index_[key] = planned_.size();
      planned_.push_back({*slot, 0, 0, static_cast<int>(t), -1, -1});
    }
    note_compute(*slot, static_cast<int>(t));
    for (const Action& part : slot->sub_actions) note_compute(part, static_cast<int>(t));
  }
  last_read_at_.assign(steps.size(), {});
  std::map<std::pair<int, int>, std::size_t> queue_of;  // (stage, direction)
  for (std::size_t i = 0; i < planned_.size(); ++i) {
    PlannedReceive& receive = planned_[i];
    const ReceiveKey key = key_of(receive.action);
    const auto pool = std::make_pair(std::get<0>(key), std::get<2>(key));
    auto [found, added] = queue_of.emplace(pool, queues_.size());
    if (added) {
      queues_.push_back({pool.first, static_cast<FlowDirection>(pool.second), {}, 0});
    }
    receive.queue = found->second;
    receive.place = queues_[receive.queue].receives.size();
    queues_[receive.queue].receives.push_back(i);
    auto first = first_read.find(key);
    auto last = last_compute.find({receive.action.stage, receive.action.microbatch});
    if (first != first_read.end() && last != last_compute.end()) {
      receive.first_read = first->second;
      receive.last_read = last->second;
      last_read_at_[static_cast<std::size_t>(last->second)].push_back(i);
    }
  }
}

void StepComms::allocate_buffers(const std::map<int, std::vector<TensorMeta>>& input_metas,
                                 const std::map<int, std::vector<TensorMeta>>& output_metas) {
  plan_receives();
  const int steps = static_cast<int>(plan_.rank_steps.at(static_cast<std::size_t>(rank_)).size());
  for (const ReceiveQueue& queue : queues_) {
    // The most buffers of this queue in use at once: from the receive's post (its RECV action
    // when receives are posted in plan order, its first read when they are posted ahead) to the
    // plan step of its last read.
    std::map<int, int> change;  // plan step -> buffers taken (+) and given back (-) there
    for (std::size_t index : queue.receives) {
      const PlannedReceive& receive = planned_[index];
      const int last = receive.last_read >= 0 ? receive.last_read : steps;
      const int start =
          receives_match_by_tag_ && receive.first_read >= 0 ? receive.first_read : receive.step;
      change[std::min(last, start)] += 1;
      change[last + 1] -= 1;
    }
    int in_use = 0, peak = 0;
    for (const auto& [step, delta] : change) peak = std::max(peak, in_use += delta);
    const int slots = std::min(static_cast<int>(queue.receives.size()), peak + kSpareSlots);
    if (queue.direction == FlowDirection::kForward) {
      buffers_.add_pool(queue.stage, queue.direction, input_metas.at(queue.stage), slots);
    } else {
      // Gradients come back only for the outputs that carry them.
      std::vector<TensorMeta> grads;
      for (const auto& meta : output_metas.at(queue.stage)) {
        if (is_differentiable(meta)) grads.push_back(meta);
      }
      buffers_.add_pool(queue.stage, queue.direction, grads, slots);
    }
  }
}

void StepComms::give_back_all() {
  for (const auto& [key, slot] : slot_of_) {
    buffers_.give_back(std::get<0>(key), static_cast<FlowDirection>(std::get<2>(key)), slot);
  }
  slot_of_.clear();
}

void StepComms::begin_step(int training_step) {
  training_step_ = training_step;
  communicating_ = false;
  pending_receives_.clear();
  give_back_all();
  for (ReceiveQueue& queue : queues_) queue.next = 0;
  sends_.clear();
}

void StepComms::end_step() {
  sends_.clear();
}

void StepComms::add_receive(const Action& receive, int slot, std::vector<P2POp>* ops,
                            std::vector<Destination>* destinations) {
  const int s = receive.stage, mb = receive.microbatch;
  const ReceiveKey key = key_of(receive);
  const FlowDirection direction = direction_of(receive.type);
  const bool forward = direction == FlowDirection::kForward;
  const int peer = transport_rank(plan_.rank_of(forward ? s - 1 : s + 1));
  const std::uint64_t tag = comm_tag(forward ? s - 1 : s, mb, direction);
  slot_of_[key] = slot;
  pending_receives_[key];  // a receive of no tensor is complete at once
  for (const auto& buffer : buffers_.tensors(s, direction, slot)) {
    ops->push_back({P2PDirection::kRecv, buffer, peer, tag});
    destinations->push_back({true, key, {}});
  }
}

StepComms::BatchBytes StepComms::post_batch(std::vector<P2POp>& ops,
                                            std::vector<Destination>& destinations) {
  BatchBytes bytes;
  if (ops.empty()) return bytes;
  // Counted for the observers' spans only: nobody listening, nothing to count.
  if (spans_.observed()) {
    for (const P2POp& op : ops) {
      const auto size = static_cast<std::int64_t>(op.tensor.nbytes());
      (op.direction == P2PDirection::kSend ? bytes.sent : bytes.received) += size;
    }
  }
  std::vector<std::unique_ptr<Work>> works = require_transport().post_batch(ops);
  for (std::size_t i = 0; i < destinations.size(); ++i) {
    Destination& destination = destinations[i];
    if (destination.receive) {
      pending_receives_[destination.key].push_back(std::move(works[i]));
    } else {
      sends_.push_back({std::move(destination.data), std::move(works[i])});
    }
  }
  return bytes;
}

StepComms::BatchBytes StepComms::post(const std::vector<Action>& actions,
                                      const Outgoing& outgoing) {
  std::vector<P2POp> ops;
  std::vector<Destination> destinations;  // one per op
  for (const Action& action : actions) {
    const int s = action.stage, mb = action.microbatch;
    switch (action.type) {
      case ActionType::kSendForward:
      case ActionType::kSendBackward: {
        const bool forward = action.type == ActionType::kSendForward;
        // Activations are tagged by the sending stage, gradients by the receiving one.
        const int peer = transport_rank(plan_.rank_of(forward ? s + 1 : s - 1));
        const std::uint64_t tag = comm_tag(forward ? s : s - 1, mb, direction_of(action.type));
        for (at::Tensor& tensor : outgoing(action)) {
          ops.push_back({P2PDirection::kSend, tensor, peer, tag});
          destinations.push_back({false, {}, std::move(tensor)});
        }
        break;
      }
      case ActionType::kRecvForward:
      case ActionType::kRecvBackward: {
        // With tag matching, receives are posted ahead as buffers free, not here.
        if (receives_match_by_tag_) break;
        add_receive(action, buffers_.take_slot(s, direction_of(action.type)), &ops, &destinations);
        break;
      }
      default:
        break;
    }
  }
  return post_batch(ops, destinations);
}

// Receives go out ahead of the plan, in plan order for each (stage, direction), as soon as a
// buffer is free for them, from the rank's first communication of the step on: before a run
// that receives, or right after a run that only sends (the first stage's first forward does
// not wait for them, and its first send goes first). Not only when the plan reaches them:
// transports such as Gloo move a message only once its receive is posted, so a rank that
// reached its first RECV only after a stage's forwards (looped BFS, interleaved and V schedules
// on rank 0) held its peer's outputs back that long.
void StepComms::post_ready_receives() {
  if (!receives_match_by_tag_ || !communicating_) return;
  std::vector<P2POp> ops;
  std::vector<Destination> destinations;
  std::vector<Action> posted;
  for (ReceiveQueue& queue : queues_) {
    while (queue.next < queue.receives.size()) {
      const int slot = buffers_.take_free_slot(queue.stage, queue.direction);
      if (slot < 0) break;
      const Action& receive = planned_[queue.receives[queue.next++]].action;
      add_receive(receive, slot, &ops, &destinations);
      if (spans_.observed()) posted.push_back(receive);
    }
  }
  if (ops.empty()) return;
  try {
    const double posted_at = spans_.now();
    const BatchBytes bytes = post_batch(ops, destinations);
    spans_.add(SpanKind::kPostReceives, posted_at, spans_.now(), posted, bytes.sent,
               bytes.received);
  } catch (const std::exception& error) {
    throw Error(std::string("posting receives ahead: ") + error.what());
  }
}

void StepComms::post_through(ReceiveQueue& queue, std::size_t index) {
  std::vector<P2POp> ops;
  std::vector<Destination> destinations;
  while (queue.next <= index) {
    const Action& receive = planned_[queue.receives[queue.next++]].action;
    add_receive(receive, buffers_.take_slot(queue.stage, queue.direction), &ops, &destinations);
  }
  post_batch(ops, destinations);
}

void StepComms::post_run(const std::vector<Action>& run, const Outgoing& outgoing) {
  const bool first = receives_match_by_tag_ && !communicating_;
  communicating_ = true;
  bool receives = false;
  for (const Action& action : run) receives = receives || is_receive(action.type);
  // The receives (its own among them) go before a run that receives, right behind a run that
  // only sends.
  if (first && receives) post_ready_receives();
  const double posted_at = spans_.now();
  const BatchBytes bytes = post(run, outgoing);
  spans_.add(SpanKind::kPostTransfers, posted_at, spans_.now(), run, bytes.sent, bytes.received);
  if (first && !receives) post_ready_receives();
}

void StepComms::after_compute(int timestep) {
  // Completed sends first: a buffer one of them held may free for the receives posted below.
  while (!sends_.empty() && sends_.front().work->test()) sends_.pop_front();
  if (timestep >= 0 && static_cast<std::size_t>(timestep) < last_read_at_.size()) {
    for (std::size_t index : last_read_at_[static_cast<std::size_t>(timestep)]) {
      const Action& receive = planned_[index].action;
      auto held = slot_of_.find(key_of(receive));
      if (held == slot_of_.end()) continue;
      buffers_.give_back(receive.stage, direction_of(receive.type), held->second);
      slot_of_.erase(held);
    }
  }
  post_ready_receives();
}

const std::vector<at::Tensor>& StepComms::await(const Action& receive,
                                                const std::function<void()>& before_wait) {
  const bool forward = receive.type == ActionType::kRecvForward;
  const ReceiveKey key = key_of(receive);
  if (receives_match_by_tag_ && !pending_receives_.count(key)) {
    // Not posted ahead (every buffer was still busy): posted now, with those before it.
    auto planned = planned_index_.find(key);
    if (planned != planned_index_.end() && !slot_of_.count(key)) {
      const PlannedReceive& receive = planned_[planned->second];
      post_through(queues_[receive.queue], receive.place);
    }
  }
  auto found = pending_receives_.find(key);
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
                                 transport_rank(plan_.rank_of(sender)), training_step_};
    const WaitNotice notice("runtime", &AwaitedReceive::describe, &awaited);
    for (auto& work : found->second) work->wait(timeout_);
  }
  spans_.add(SpanKind::kWaitReceive, waiting_since, spans_.now(), receive);
  pending_receives_.erase(found);
  return buffers_.tensors(receive.stage, direction_of(receive.type), slot_of_.at(key));
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
  const auto never_used = [](const ReceiveKey& key) {
    return Error("the step ended with a receive never used (" +
                 std::string(std::get<2>(key) == static_cast<int>(FlowDirection::kForward)
                                 ? "activations"
                                 : "gradients") +
                 " of stage " + std::to_string(std::get<0>(key)) + ", microbatch " +
                 std::to_string(std::get<1>(key)) + ")");
  };
  if (!pending_receives_.empty()) throw never_used(pending_receives_.begin()->first);
  if (!receives_match_by_tag_) return;  // posted in plan order: every one was pending above
  for (const ReceiveQueue& queue : queues_) {
    if (queue.next < queue.receives.size()) {
      throw never_used(key_of(planned_[queue.receives[queue.next]].action));
    }
  }
}

}  // namespace baton
