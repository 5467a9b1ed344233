#include "baton/runtime/executor.h"

#include <ATen/ATen.h>

#include <malloc.h>
#include <algorithm>
#include <cmath>
#include <csignal>
#include <deque>
#include <optional>

#include "baton/all_reduce.h"
#include "baton/error.h"
#include "baton/log.h"
#include "baton/plan/gradient_reduction.h"
#include "baton/runtime/microbatch.h"
#include "baton/runtime/split_backward.h"
#include "baton/step_error.h"
#include "baton/transport_capabilities.h"
#include "baton/wait_notice.h"
#include "comm_tags.h"
#include "metadata_handshake.h"

namespace baton {
namespace {

// Bytes malloc has handed out and not got back (every arena, and blocks it mmapped).
std::int64_t heap_bytes_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  return static_cast<std::int64_t>(info.uordblks + info.hblkhd);
#else
  return 0;
#endif
}

bool is_differentiable(const TensorMeta& meta) {
  return at::isFloatingType(meta.dtype) || at::isComplexType(meta.dtype);
}

// Autograd state of one (stage, microbatch) between its forward and its backward.
struct MicrobatchState {
  std::vector<at::Tensor> inputs;       // leaves; differentiable ones require grad (s > 0)
  std::vector<at::Tensor> outputs;      // with autograd history
  at::Tensor loss;                      // last stage: scaled loss
  std::vector<at::Tensor> input_grads;  // after B or I
  std::unique_ptr<SplitBackward> split;
  bool forward_done = false;
  bool backward_done = false;
};

struct PendingRecv {
  std::vector<std::unique_ptr<Work>> works;
  std::string description;
};

// Data parallelism: some of a stage's gradients, of one dtype, gathered in one preallocated
// flat tensor that is all-reduced as a whole (one message per bucket, not per parameter).
struct GradientBucket {
  std::vector<at::Tensor> params;
  std::vector<std::int64_t> offsets;  // of each parameter's gradient in `flat`
  at::Tensor flat;
};

// A bucket's all-reduce under way, and the plan step that posted it (for errors).
struct PendingReduction {
  GradientBucket* bucket;
  std::unique_ptr<Work> work;
  int stage;
  int timestep;
  double posted_at;
  double completed_at;  // when this rank saw it done; -1 while it runs
};

}  // namespace

struct PipelineExecutor::Impl {
  int rank;
  Plan plan;
  std::map<int, std::shared_ptr<Stage>> stages;
  std::shared_ptr<Transport> transport;
  std::vector<std::shared_ptr<Validator>> validators;
  LossFunction loss_function;
  ExecutorOptions options;

  std::map<int, std::vector<TensorMeta>> input_metas;
  std::map<int, std::vector<TensorMeta>> output_metas;
  RecvBuffers buffers;
  // The transport matches receives by tag: every receive of a step is posted at once.
  bool receives_match_by_tag = false;
  bool receives_posted = false;       // this step's, when receives_match_by_tag
  std::vector<Action> step_receives;  // this rank's RECV actions, in plan order
  bool ready = false;
  int training_step = 0;
  std::chrono::steady_clock::time_point step_start;
  double wait_in_action = 0.0;  // seconds the current compute action spent waiting for data

  // Data parallelism (ExecutorOptions::replica, replicas).
  AllReduceTransport* reducer = nullptr;  // set in setup() when there are replicas
  int reduce_group = -1;
  std::map<int, std::vector<GradientBucket>> buckets;  // by stage
  std::vector<PendingReduction> reductions;            // this step's
  int current_timestep = 0;

  // The transport's rank of plan rank `pipeline_rank` in this replica.
  int peer_rank(int pipeline_rank) const {
    return options.replica * plan.num_ranks + pipeline_rank;
  }
  StepError step_error(int timestep, const std::string& cause) const {
    return annotate_step_error(plan, rank, training_step, timestep, cause, options.replica,
                               options.replicas);
  }

  double since_step_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
  }
  void record(ActionSpan::Kind kind, std::string name, double start, double end) {
    if (kind == ActionSpan::Kind::kCompute) {
      result.compute_seconds += end - start;
    } else {
      result.comm_seconds += end - start;
    }
    if (options.record_timeline) result.timeline.push_back({kind, std::move(name), start, end});
  }

  // Per step.
  std::map<std::pair<int, int>, MicrobatchState> states;
  std::map<std::tuple<int, int, int>, PendingRecv> pending_recvs;
  // Sends in posting order, each with its data, which stays alive until the send completes
  // (then it is released at once: a step of many microbatches does not hold them all).
  struct InFlightSend {
    at::Tensor data;
    std::unique_ptr<Work> work;
  };
  std::deque<InFlightSend> sends;
  int live_activations = 0;  // stage-microbatches between their F and the end of their backward
  std::vector<std::vector<at::Tensor>> microbatch_inputs;
  std::vector<at::Tensor> microbatch_targets;
  StepResult result;

  int last_stage() const { return plan.num_stages - 1; }
  int rank_of(int stage) const { return plan.stage_to_rank.at(static_cast<std::size_t>(stage)); }

  Stage& stage(int index) {
    auto found = stages.find(index);
    if (found == stages.end()) {
      throw Error("stage " + std::to_string(index) + " is not on rank " + std::to_string(rank) +
                  " (the plan places it on rank " + std::to_string(rank_of(index)) + ")");
    }
    return *found->second;
  }

  MicrobatchState& state(int stage_index, int microbatch) {
    return states[{stage_index, microbatch}];
  }

  void validate(const std::vector<at::Tensor>& tensors, const std::vector<TensorMeta>& metas,
                int stage_index, int microbatch, TensorRole role) {
    if (validators.empty()) return;
    for (std::size_t i = 0; i < tensors.size() && i < metas.size(); ++i) {
      TensorCheck check{stage_index, microbatch, role, static_cast<int>(i), &metas[i]};
      for (const auto& validator : validators) {
        if (validator->wants(role)) validator->check(tensors[i], check);
      }
    }
    if (tensors.size() != metas.size() && role != TensorRole::kGradientInput &&
        role != TensorRole::kGradientOutput) {
      throw ValidationError("stage " + std::to_string(stage_index) + " " + tensor_role_name(role) +
                            "s (microbatch " + std::to_string(microbatch) + "): expected " +
                            std::to_string(metas.size()) + " tensors, got " +
                            std::to_string(tensors.size()));
    }
  }

  // ---- communication -------------------------------------------------------------------

  Transport& require_transport() {
    if (!transport) throw Error("the plan communicates between ranks but no transport is set");
    return *transport;
  }

  // Posts a run of adjacent SEND/RECV actions as one batch.
  void post_comms(const std::vector<Action>& actions) {
    std::vector<P2POp> ops;
    std::vector<std::tuple<int, int, int>> recv_keys;  // per recv op, in order
    std::vector<std::size_t> recv_counts;
    for (const Action& action : actions) {
      const int s = action.stage, mb = action.microbatch;
      switch (action.type) {
        case ActionType::kSendForward: {
          if (!state(s, mb).forward_done) {
            throw Error("sends the activations of stage " + std::to_string(s) + ", microbatch " +
                        std::to_string(mb) + " before computing them");
          }
          for (const auto& tensor : state(s, mb).outputs) {
            at::Tensor data = tensor.detach().contiguous();
            sends.push_back({data, nullptr});
            ops.push_back({P2PDirection::kSend, data, peer_rank(rank_of(s + 1)),
                           comm_tag(s, mb, FlowDirection::kForward)});
          }
          break;
        }
        case ActionType::kSendBackward: {
          if (!state(s, mb).backward_done) {
            throw Error("sends the input gradients of stage " + std::to_string(s) +
                        ", microbatch " + std::to_string(mb) + " before computing them");
          }
          const auto& metas = input_metas.at(s);
          auto& grads = state(s, mb).input_grads;
          for (std::size_t i = 0; i < metas.size(); ++i) {
            if (!is_differentiable(metas[i])) continue;
            // A stage input that got no gradient still owes the peer a message.
            at::Tensor grad =
                i < grads.size() && grads[i].defined()
                    ? grads[i].contiguous()
                    : at::zeros(metas[i].shape, at::TensorOptions().dtype(metas[i].dtype));
            sends.push_back({grad, nullptr});
            ops.push_back({P2PDirection::kSend, grad, peer_rank(rank_of(s - 1)),
                           comm_tag(s - 1, mb, FlowDirection::kBackward)});
          }
          // Held by the send from here on. Keeping per-microbatch tensors to the end of the
          // step would interleave long-lived blocks with the backward's large temporaries,
          // and the heap would grow by about one weight gradient per microbatch.
          grads.clear();
          break;
        }
        case ActionType::kRecvForward:
        case ActionType::kRecvBackward: {
          const bool forward = action.type == ActionType::kRecvForward;
          const FlowDirection direction =
              forward ? FlowDirection::kForward : FlowDirection::kBackward;
          if (pending_recvs.count({s, mb, static_cast<int>(direction)})) break;  // posted early
          const auto& targets = buffers.get(s, mb, direction);
          const int peer = peer_rank(forward ? rank_of(s - 1) : rank_of(s + 1));
          for (const auto& buffer : targets) {
            ops.push_back(
                {P2PDirection::kRecv, buffer, peer, comm_tag(forward ? s - 1 : s, mb, direction)});
          }
          recv_keys.emplace_back(s, mb, static_cast<int>(direction));
          recv_counts.push_back(targets.size());
          break;
        }
        default:
          break;
      }
    }
    std::vector<std::unique_ptr<Work>> works;
    if (!ops.empty()) works = require_transport().post_batch(ops);
    std::size_t next = 0;
    // This batch's sends are the last ones queued, in the same order as their ops.
    std::size_t send_index = sends.size();
    for (const auto& op : ops) send_index -= op.direction == P2PDirection::kSend ? 1 : 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].direction == P2PDirection::kSend) sends[send_index++].work = std::move(works[i]);
    }
    for (std::size_t k = 0; k < recv_keys.size(); ++k) {
      PendingRecv pending;
      for (std::size_t j = 0; j < recv_counts[k]; ++j) {
        while (ops[next].direction != P2PDirection::kRecv) ++next;
        pending.works.push_back(std::move(works[next++]));
      }
      pending_recvs[recv_keys[k]] = std::move(pending);
    }
  }

  // What await_recv() waits for, put into words only when a WaitNotice needs them.
  struct AwaitedReceive {
    const Impl* impl;
    int stage, microbatch;
    bool forward;
    static std::string describe(const void* context) {
      const auto& self = *static_cast<const AwaitedReceive*>(context);
      const int sender = self.forward ? self.stage - 1 : self.stage + 1;
      return std::string(self.forward ? "the activations" : "the gradients") + " of stage " +
             std::to_string(sender) + ", microbatch " + std::to_string(self.microbatch) +
             " from rank " + std::to_string(self.impl->peer_rank(self.impl->rank_of(sender))) +
             " (training step " + std::to_string(self.impl->training_step) + ")";
    }
  };

  void inject_failure_at(const std::string& action) const {
    if (options.inject_step != training_step || action != options.inject_action) return;
    if (options.inject_signal != 0) std::raise(options.inject_signal);
    throw Error("injected failure (BATON_INJECT_FAILURE)" +
                std::string(is_compute_name(action) ? "" : " at the wait for " + action));
  }
  static bool is_compute_name(const std::string& action) {
    return action.find("RECV") == std::string::npos;
  }

  // Waits for the receive of (stage, microbatch, direction) and returns its buffers.
  const std::vector<at::Tensor>& await_recv(int s, int mb, FlowDirection direction) {
    auto key = std::make_tuple(s, mb, static_cast<int>(direction));
    auto found = pending_recvs.find(key);
    if (found == pending_recvs.end()) {
      throw Error(std::string("needs the ") +
                  (direction == FlowDirection::kForward ? "activations" : "gradients") +
                  " of stage " + std::to_string(s) + ", microbatch " + std::to_string(mb) +
                  " from another rank, but no earlier step of the plan receives them");
    }
    if (!options.inject_action.empty()) {
      inject_failure_at(std::to_string(s) +
                        (direction == FlowDirection::kForward ? "RECV_F" : "RECV_B") +
                        std::to_string(mb));
    }
    const double waiting_since = since_step_start();
    {
      const AwaitedReceive awaited{this, s, mb, direction == FlowDirection::kForward};
      const WaitNotice notice("runtime", &AwaitedReceive::describe, &awaited);
      for (auto& work : found->second.works) work->wait(options.timeout);
    }
    const double waited_until = since_step_start();
    wait_in_action += waited_until - waiting_since;
    if (options.record_timeline) {
      record(ActionSpan::Kind::kCommWait,
             "wait " + std::to_string(s) +
                 (direction == FlowDirection::kForward ? "RECV_F" : "RECV_B") + std::to_string(mb),
             waiting_since, waited_until);
    } else {
      record(ActionSpan::Kind::kCommWait, std::string(), waiting_since, waited_until);
    }
    pending_recvs.erase(found);
    return buffers.get(s, mb, direction);
  }

  // ---- compute -------------------------------------------------------------------------

  void forward(int s, int mb) {
    MicrobatchState& st = state(s, mb);
    std::vector<at::Tensor> inputs;
    if (s == 0) {
      inputs = microbatch_inputs.at(static_cast<std::size_t>(mb));
    } else if (rank_of(s - 1) == rank) {
      MicrobatchState& previous = state(s - 1, mb);
      if (!previous.forward_done) {
        throw Error("forward of stage " + std::to_string(s) + " runs before the forward of stage " +
                    std::to_string(s - 1) + " on the same rank (microbatch " + std::to_string(mb) +
                    ")");
      }
      for (const auto& output : previous.outputs) inputs.push_back(output.detach());
    } else {
      for (const auto& buffer : await_recv(s, mb, FlowDirection::kForward))
        inputs.push_back(buffer);
    }
    const auto& metas = input_metas.at(s);
    validate(inputs, metas, s, mb, TensorRole::kForwardInput);
    if (s > 0) {
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (is_differentiable(metas[i])) inputs[i] = inputs[i].detach().requires_grad_(true);
      }
    }
    st.inputs = inputs;
    st.outputs = stage(s).forward(inputs);
    validate(st.outputs, output_metas.at(s), s, mb, TensorRole::kForwardOutput);
    if (s == last_stage()) {
      at::Tensor loss =
          loss_function(st.outputs, microbatch_targets.at(static_cast<std::size_t>(mb)));
      result.microbatch_losses.push_back(loss.item<double>());
      if (options.scale_loss_by_microbatches) loss = loss / plan.num_microbatches;
      st.loss = loss;
    }
    st.forward_done = true;
    result.peak_activations = std::max(result.peak_activations, ++live_activations);
  }

  // The gradients of stage s's outputs for microbatch mb, and the tensors they belong to.
  void backward_roots(int s, int mb, std::vector<at::Tensor>* roots,
                      std::vector<at::Tensor>* grads) {
    MicrobatchState& st = state(s, mb);
    if (!st.forward_done) {
      throw Error("backward of stage " + std::to_string(s) + ", microbatch " + std::to_string(mb) +
                  " runs before its forward");
    }
    if (s == last_stage()) {
      roots->push_back(st.loss);
      return;
    }
    std::vector<at::Tensor> arriving;
    if (rank_of(s + 1) == rank) {
      MicrobatchState& next = state(s + 1, mb);
      if (!next.backward_done) {
        throw Error("backward of stage " + std::to_string(s) +
                    " runs before the backward of stage " + std::to_string(s + 1) +
                    " on the same rank (microbatch " + std::to_string(mb) + ")");
      }
      arriving = std::move(next.input_grads);
      next.input_grads.clear();
    } else {
      arriving = await_recv(s, mb, FlowDirection::kBackward);
    }
    const auto& metas = output_metas.at(s);
    std::size_t received = 0;
    for (std::size_t i = 0; i < st.outputs.size(); ++i) {
      if (!is_differentiable(metas[i])) continue;
      const bool local = rank_of(s + 1) == rank;
      at::Tensor grad =
          local ? (i < arriving.size() ? arriving[i] : at::Tensor()) : arriving.at(received++);
      if (!grad.defined() || !st.outputs[i].requires_grad()) continue;
      TensorCheck check{s, mb, TensorRole::kGradientInput, static_cast<int>(i), &metas[i]};
      for (const auto& validator : validators) {
        if (validator->wants(TensorRole::kGradientInput)) validator->check(grad, check);
      }
      roots->push_back(st.outputs[i]);
      grads->push_back(grad);
    }
  }

  void finish_backward(int s, int mb, std::vector<at::Tensor> input_grads) {
    MicrobatchState& st = state(s, mb);
    if (s > 0) {
      std::vector<at::Tensor> checked;
      for (const auto& g : input_grads) checked.push_back(g);
      validate_gradients_out(s, mb, checked);
    }
    st.input_grads = std::move(input_grads);
    st.backward_done = true;
  }

  void validate_gradients_out(int s, int mb, const std::vector<at::Tensor>& grads) {
    const auto& metas = input_metas.at(s);
    for (std::size_t i = 0; i < grads.size() && i < metas.size(); ++i) {
      if (!grads[i].defined()) continue;
      TensorCheck check{s, mb, TensorRole::kGradientOutput, static_cast<int>(i), &metas[i]};
      for (const auto& validator : validators) {
        if (validator->wants(TensorRole::kGradientOutput)) validator->check(grads[i], check);
      }
    }
  }

  std::vector<at::Tensor> stage_parameters(int s) {
    std::vector<at::Tensor> params;
    for (const auto& named : stage(s).named_parameters()) params.push_back(named.second);
    return params;
  }

  void full_backward_action(int s, int mb) {
    std::vector<at::Tensor> roots, grads;
    backward_roots(s, mb, &roots, &grads);
    MicrobatchState& st = state(s, mb);
    std::vector<at::Tensor> input_grads =
        full_backward(roots, s == last_stage() ? std::vector<at::Tensor>() : grads, st.inputs);
    finish_backward(s, mb, std::move(input_grads));
    release_autograd(st);
  }

  void backward_input_action(int s, int mb) {
    std::vector<at::Tensor> roots, grads;
    backward_roots(s, mb, &roots, &grads);
    MicrobatchState& st = state(s, mb);
    st.split = std::make_unique<SplitBackward>(roots, st.inputs, stage_parameters(s));
    finish_backward(
        s, mb, st.split->backward_input(s == last_stage() ? std::vector<at::Tensor>() : grads));
  }

  void backward_weight_action(int s, int mb) {
    MicrobatchState& st = state(s, mb);
    if (!st.split) {
      throw Error("W of stage " + std::to_string(s) + ", microbatch " + std::to_string(mb) +
                  " runs before its I");
    }
    st.split->backward_weight();
    st.split.reset();
    release_autograd(st);
  }

  // Activations are released as soon as the backward no longer needs them.
  void release_autograd(MicrobatchState& st) {
    st.inputs.clear();
    st.outputs.clear();
    st.loss = at::Tensor();
    --live_activations;
  }

  void release_completed_sends() {
    while (!sends.empty() && sends.front().work && sends.front().work->test()) sends.pop_front();
  }

  // ---- data parallelism ------------------------------------------------------------------

  // Buckets of each local stage's parameters: in their order, a new bucket at a change of
  // dtype or when the next gradient would pass bucket_bytes (a larger one gets its own).
  void allocate_gradient_buckets() {
    for (auto& entry : stages) {
      std::vector<GradientBucket>& stage_buckets = buckets[entry.first];
      std::int64_t bytes = 0;
      for (const auto& named : entry.second->named_parameters()) {
        const at::Tensor& param = named.second;
        const std::int64_t param_bytes =
            param.numel() * static_cast<std::int64_t>(param.element_size());
        if (stage_buckets.empty() ||
            stage_buckets.back().params.front().scalar_type() != param.scalar_type() ||
            bytes + param_bytes > options.bucket_bytes) {
          stage_buckets.emplace_back();
          bytes = 0;
        }
        GradientBucket& bucket = stage_buckets.back();
        bucket.offsets.push_back(
            bucket.params.empty() ? 0 : bucket.offsets.back() + bucket.params.back().numel());
        bucket.params.push_back(param);
        bytes += param_bytes;
      }
      for (GradientBucket& bucket : stage_buckets) {
        const at::Tensor& last = bucket.params.back();
        bucket.flat = at::empty({bucket.offsets.back() + last.numel()}, last.options());
      }
    }
  }

  // Copies stage s's gradients into its buckets and starts their all-reduces.
  void post_gradient_reduction(int s) {
    if (options.replicas <= 1) return;  // one replica: its gradients are the sum already
    if (reducer == nullptr) throw Error("the plan reduces gradients but setup() joined no group");
    for (GradientBucket& bucket : buckets.at(s)) {
      for (std::size_t i = 0; i < bucket.params.size(); ++i) {
        const at::Tensor& grad = bucket.params[i].grad();
        at::Tensor slot = bucket.flat.narrow(0, bucket.offsets[i], bucket.params[i].numel());
        // A parameter the loss does not reach has no gradient on any replica: zeros keep the
        // buckets the same everywhere, and it keeps no gradient afterwards.
        if (grad.defined()) {
          slot.copy_(grad.reshape({-1}));
        } else {
          slot.zero_();
        }
      }
      reductions.push_back({&bucket, reducer->iallreduce(reduce_group, {bucket.flat}), s,
                            current_timestep, since_step_start(), -1.0});
    }
  }

  // Notes when the running all-reduces finished (a test() is a lock and a flag), so that the
  // timeline shows how long each really took, not only what was left at the step's end.
  void note_completed_reductions() {
    for (PendingReduction& pending : reductions) {
      if (pending.completed_at < 0 && pending.work->test())
        pending.completed_at = since_step_start();
    }
  }

  // Waits for the step's all-reduces and hands each parameter its gradient averaged over the
  // replicas; with the last stage here, the loss too.
  void finish_gradient_reductions() {
    if (reductions.empty()) return;
    const double waiting_since = since_step_start();
    for (PendingReduction& pending : reductions) {
      try {
        const WaitNotice notice("runtime", "the gradient all-reduce of stage " +
                                               std::to_string(pending.stage) + " across " +
                                               std::to_string(options.replicas) + " replicas");
        pending.work->wait(options.timeout);
        if (pending.completed_at < 0) pending.completed_at = since_step_start();
      } catch (const std::exception& error) {
        throw step_error(pending.timestep,
                         "the all-reduce of stage " + std::to_string(pending.stage) +
                             "'s gradients across the replicas failed: " + error.what());
      }
    }
    const double waited_until = since_step_start();
    result.exposed_reduce_seconds = waited_until - waiting_since;
    record(ActionSpan::Kind::kCommWait, options.record_timeline ? "wait REDUCE_GRAD" : "",
           waiting_since, waited_until);
    if (options.record_timeline) {
      for (const PendingReduction& pending : reductions) {
        result.timeline.push_back({ActionSpan::Kind::kReduce,
                                   std::to_string(pending.stage) + "REDUCE_GRAD", pending.posted_at,
                                   pending.completed_at});
      }
    }
    const double scale = 1.0 / options.replicas;
    for (PendingReduction& pending : reductions) {
      GradientBucket& bucket = *pending.bucket;
      bucket.flat.mul_(scale);
      for (std::size_t i = 0; i < bucket.params.size(); ++i) {
        at::Tensor grad = bucket.params[i].mutable_grad();
        if (!grad.defined()) continue;
        grad.copy_(
            bucket.flat.narrow(0, bucket.offsets[i], bucket.params[i].numel()).view(grad.sizes()));
      }
    }
    reductions.clear();
  }

  void run_action(const Action& action) {
    switch (action.type) {
      case ActionType::kForward:
        forward(action.stage, action.microbatch);
        break;
      case ActionType::kBackward:
        full_backward_action(action.stage, action.microbatch);
        break;
      case ActionType::kBackwardInput:
        backward_input_action(action.stage, action.microbatch);
        break;
      case ActionType::kBackwardWeight:
        backward_weight_action(action.stage, action.microbatch);
        break;
      case ActionType::kOverlapForwardBackward:
        for (const auto& sub : action.sub_actions) run_action(sub);
        break;
      case ActionType::kReduceGrad:
        post_gradient_reduction(action.stage);
        break;
      case ActionType::kUnshard:
      case ActionType::kReshard:
        break;  // parameters are never sharded here: nothing to gather
      default:
        throw Error("cannot run action " + to_string(action));
    }
  }

  static bool is_receive(ActionType type) {
    return type == ActionType::kRecvForward || type == ActionType::kRecvBackward;
  }

  // Every receive of the step is posted at once, at the rank's first communication of the step:
  // before a run that receives, or right after a run that only sends (the first stage's first
  // forward does not wait for them, and its first send goes first). Not later: transports
  // such as Gloo move a message only once its receive is posted, so a rank that reached its
  // first RECV only after a stage's forwards (looped BFS, interleaved and V schedules on rank
  // 0) held its peer's outputs back that long: 1-5 ms before 2F0 in looped BFS on
  // bench-mlp-interleaved, 0.1 ms once posted after the first send.
  void post_step_receives(std::size_t t) {
    receives_posted = true;
    try {
      const double posted_at = since_step_start();
      post_comms(step_receives);
      record(ActionSpan::Kind::kCommPost, options.record_timeline ? "post receives" : "", posted_at,
             since_step_start());
    } catch (const StepError&) {
      throw;
    } catch (const std::exception& error) {
      throw step_error(static_cast<int>(t),
                       std::string("posting the step's receives: ") + error.what());
    }
  }

  void run_plan() {
    const auto& steps = plan.rank_steps.at(static_cast<std::size_t>(rank));
    const bool early_receives = receives_match_by_tag && !step_receives.empty();
    receives_posted = false;
    std::size_t t = 0;
    while (t < steps.size()) {
      try {
        if (!steps[t]) {
          ++t;
          continue;
        }
        if (is_comm(steps[t]->type)) {
          std::vector<Action> run;
          const std::size_t first = t;
          bool receives = false;
          while (t < steps.size() && steps[t] && is_comm(steps[t]->type)) {
            receives = receives || is_receive(steps[t]->type);
            run.push_back(*steps[t++]);
          }
          // The step's receives, if not yet posted, go before a run that receives (its own
          // are among them), or right behind a run that only sends.
          const bool post_receives_now = early_receives && !receives_posted;
          if (post_receives_now && receives) post_step_receives(first);
          try {
            const double posted_at = since_step_start();
            post_comms(run);
            std::string names;
            if (options.record_timeline) {
              for (const auto& comm : run) names += (names.empty() ? "" : " ") + to_string(comm);
            }
            record(ActionSpan::Kind::kCommPost, std::move(names), posted_at, since_step_start());
          } catch (...) {
            t = first;
            throw;
          }
          if (post_receives_now && !receives) post_step_receives(first);
          continue;
        }
        if (!options.inject_action.empty()) inject_failure_at(to_string(*steps[t]));
        current_timestep = static_cast<int>(t);
        if (steps[t]->type == ActionType::kReduceGrad) {
          const double posted_at = since_step_start();
          run_action(*steps[t]);
          record(ActionSpan::Kind::kCommPost,
                 options.record_timeline ? to_string(*steps[t]) : std::string(), posted_at,
                 since_step_start());
          ++t;
          continue;
        }
        const double started = since_step_start();
        wait_in_action = 0.0;
        run_action(*steps[t]);
        release_completed_sends();
        if (options.record_timeline && !reductions.empty()) note_completed_reductions();
        if (options.sample_heap) {
          result.peak_heap_bytes = std::max(result.peak_heap_bytes, heap_bytes_in_use());
        }
        // The compute span starts where waiting for its inputs ended.
        record(ActionSpan::Kind::kCompute,
               options.record_timeline ? to_string(*steps[t]) : std::string(),
               started + wait_in_action, since_step_start());
        ++t;
      } catch (const StepError&) {
        throw;
      } catch (const std::exception& error) {
        throw step_error(static_cast<int>(t), error.what());
      }
    }
    // Every send must complete before the step ends: the peer relies on it.
    const int end = static_cast<int>(steps.size());
    try {
      const double draining_since = since_step_start();
      {
        const WaitNotice notice(
            "runtime",
            [](const void* step) {
              return "this rank's sends of training step " +
                     std::to_string(*static_cast<const int*>(step)) +
                     " to be taken by their receivers";
            },
            &training_step);
        for (auto& send : sends) send.work->wait(options.timeout);
      }
      record(ActionSpan::Kind::kCommWait, "wait sends", draining_since, since_step_start());
      if (!pending_recvs.empty()) {
        const auto& key = pending_recvs.begin()->first;
        throw Error("the step ended with a posted receive never used (stage " +
                    std::to_string(std::get<0>(key)) + ", microbatch " +
                    std::to_string(std::get<1>(key)) + ")");
      }
    } catch (const std::exception& error) {
      throw step_error(end > 0 ? end - 1 : 0, std::string("finishing the step: ") + error.what());
    }
    finish_gradient_reductions();
  }
};

PipelineExecutor::PipelineExecutor(int rank, Plan lowered_plan,
                                   std::vector<std::shared_ptr<Stage>> stages,
                                   std::shared_ptr<Transport> transport,
                                   std::vector<std::shared_ptr<Validator>> validators,
                                   LossFunction loss, ExecutorOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.rank = rank;
  s.plan = std::move(lowered_plan);
  if (rank < 0 || rank >= s.plan.num_ranks) {
    throw Error("rank " + std::to_string(rank) + " is outside the plan's " +
                std::to_string(s.plan.num_ranks) + " ranks");
  }
  // Transfer tags hold the microbatch in 20 bits and the stage in 18 (see comm_tags.h).
  if (s.plan.num_microbatches > (1 << 20) || s.plan.num_stages > (1 << 18)) {
    throw Error("the plan has " + std::to_string(s.plan.num_microbatches) + " microbatches and " +
                std::to_string(s.plan.num_stages) +
                " stages; at most 1048576 microbatches and 262144 stages are supported");
  }
  for (auto& stage : stages) {
    const int index = stage->index();
    if (index < 0 || index >= s.plan.num_stages || s.rank_of(index) != rank) {
      throw Error(
          "rank " + std::to_string(rank) + " was given " + stage->describe() +
          ", which the plan places on rank " +
          (index >= 0 && index < s.plan.num_stages ? std::to_string(s.rank_of(index)) : "none"));
    }
    s.stages[index] = std::move(stage);
  }
  for (int index = 0; index < s.plan.num_stages; ++index) {
    if (s.rank_of(index) == rank && !s.stages.count(index)) {
      throw Error("rank " + std::to_string(rank) + " holds stage " + std::to_string(index) +
                  " in the plan, but no stage object was given for it");
    }
  }
  if (options.replicas < 1 || options.replica < 0 || options.replica >= options.replicas) {
    throw Error("replica " + std::to_string(options.replica) + " of " +
                std::to_string(options.replicas) + " does not exist");
  }
  if (options.bucket_bytes < 1) throw Error("gradient buckets need at least one byte");
  s.transport = std::move(transport);
  s.receives_match_by_tag = dynamic_cast<const ReceivesMatchByTag*>(s.transport.get()) != nullptr;
  s.validators = std::move(validators);
  s.loss_function = std::move(loss);
  s.options = options;
}

PipelineExecutor::~PipelineExecutor() = default;

void PipelineExecutor::setup(const std::vector<at::Tensor>& inputs) {
  Impl& s = *impl_;
  std::vector<TensorMeta> first_inputs;
  if (s.stages.count(0)) {
    const auto microbatches =
        split_microbatches(inputs, s.plan.num_microbatches, s.options.split_dim);
    for (const auto& tensor : microbatches[0])
      first_inputs.push_back(TensorMeta::of(tensor.contiguous()));
  }
  HandshakeContext context{s.rank,         s.plan, s.transport.get(), s.options.timeout,
                           s.peer_rank(0), {}};
  for (auto& entry : s.stages) {
    const int index = entry.first;
    const WaitNotice notice("runtime", "the neighbours of stage " + std::to_string(index) +
                                           " to agree on the tensors it receives and sends");
    StageMetas metas = exchange_stage_metadata(context, *entry.second, first_inputs);
    s.input_metas[index] = std::move(metas.inputs);
    s.output_metas[index] = std::move(metas.outputs);
  }
  // One buffer set per receive the plan performs.
  for (const auto& slot : s.plan.rank_steps.at(static_cast<std::size_t>(s.rank))) {
    if (!slot) continue;
    if (slot->type == ActionType::kRecvForward || slot->type == ActionType::kRecvBackward) {
      s.step_receives.push_back(*slot);
    }
    if (slot->type == ActionType::kRecvForward) {
      s.buffers.allocate(slot->stage, slot->microbatch, FlowDirection::kForward,
                         s.input_metas.at(slot->stage));
    } else if (slot->type == ActionType::kRecvBackward) {
      std::vector<TensorMeta> grads;
      for (const auto& meta : s.output_metas.at(slot->stage)) {
        if (is_differentiable(meta)) grads.push_back(meta);
      }
      s.buffers.allocate(slot->stage, slot->microbatch, FlowDirection::kBackward, grads);
    }
  }
  if (s.options.replicas > 1 && reduces_gradients(s.plan)) {
    s.reducer = dynamic_cast<AllReduceTransport*>(s.transport.get());
    if (s.reducer == nullptr) {
      throw Error("the plan reduces gradients across " + std::to_string(s.options.replicas) +
                  " replicas, but the transport cannot all-reduce (it is no "
                  "baton::AllReduceTransport); use gloo, ucx or nccl, or one replica");
    }
    // The replicas of this pipeline rank: one per replica, the same column of each.
    std::vector<int> group;
    for (int replica = 0; replica < s.options.replicas; ++replica) {
      group.push_back(replica * s.plan.num_ranks + s.rank);
    }
    {
      const WaitNotice notice("runtime", "the other replicas of pipeline rank " +
                                             std::to_string(s.rank) + " to join group " +
                                             format_group(group));
      s.reduce_group = s.reducer->join_group(group);
    }
    s.allocate_gradient_buckets();
    std::int64_t bucket_count = 0, bucket_bytes = 0;
    for (const auto& entry : s.buckets) {
      for (const GradientBucket& bucket : entry.second) {
        ++bucket_count;
        bucket_bytes += bucket.flat.numel() * static_cast<std::int64_t>(bucket.flat.element_size());
      }
    }
    BATON_LOG_INFO("runtime", "gradients reduced with group " << format_group(group) << " in "
                                                              << bucket_count << " buckets ("
                                                              << bucket_bytes / 1024 << " KiB)");
  }
  BATON_LOG_INFO("runtime", "stage shapes agreed with the neighbours of "
                                << s.stages.size() << " stage" << (s.stages.size() == 1 ? "" : "s")
                                << "; " << s.buffers.allocations() << " receive buffers ("
                                << s.buffers.bytes() / 1024 << " KiB) preallocated");
  s.ready = true;
}

StepResult PipelineExecutor::run_step(const std::vector<at::Tensor>& inputs,
                                      const at::Tensor& targets) {
  Impl& s = *impl_;
  if (!s.ready) throw Error("run_step() before setup()");
  ++s.training_step;
  s.states.clear();
  s.pending_recvs.clear();
  s.sends.clear();
  s.reductions.clear();
  s.live_activations = 0;
  s.result = StepResult();
  s.microbatch_inputs.clear();
  s.microbatch_targets.clear();
  if (s.stages.count(0)) {
    s.microbatch_inputs = split_microbatches(inputs, s.plan.num_microbatches, s.options.split_dim);
  }
  if (s.stages.count(s.last_stage())) {
    for (auto& chunk :
         split_microbatches({targets}, s.plan.num_microbatches, s.options.split_dim)) {
      s.microbatch_targets.push_back(chunk[0]);
    }
  }
  s.step_start = std::chrono::steady_clock::now();
  s.run_plan();
  s.result.step_seconds = s.since_step_start();
  if (s.stages.count(s.last_stage())) {
    s.result.has_loss = true;
    double total = 0;
    for (double loss : s.result.microbatch_losses) total += loss;
    s.result.loss = s.options.scale_loss_by_microbatches
                        ? total / static_cast<double>(s.result.microbatch_losses.size())
                        : total;
    if (s.reducer != nullptr) {
      // The loss of the global batch: the mean over the replicas (each is a mean already).
      at::Tensor loss = at::full({1}, s.result.loss, at::kDouble);
      try {
        s.reducer->iallreduce(s.reduce_group, {loss})->wait(s.options.timeout);
      } catch (const std::exception& error) {
        const int last = static_cast<int>(s.plan.rank_steps.at(s.rank).size()) - 1;
        throw s.step_error(last > 0 ? last : 0,
                           std::string("averaging the loss across the replicas: ") + error.what());
      }
      s.result.loss = loss.item<double>() / s.options.replicas;
    }
  }
  s.states.clear();
  s.sends.clear();
  return s.result;
}

const RecvBuffers& PipelineExecutor::recv_buffers() const {
  return impl_->buffers;
}
const std::vector<TensorMeta>& PipelineExecutor::input_metas(int stage) const {
  return impl_->input_metas.at(stage);
}
const std::vector<TensorMeta>& PipelineExecutor::output_metas(int stage) const {
  return impl_->output_metas.at(stage);
}
int PipelineExecutor::rank() const {
  return impl_->rank;
}
const Plan& PipelineExecutor::plan() const {
  return impl_->plan;
}

}  // namespace baton
