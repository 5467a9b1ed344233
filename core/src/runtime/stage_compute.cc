#include "stage_compute.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>

#include "baton/error.h"
#include "baton/runtime/autocast_scope.h"
#include "baton/runtime/buffers_kept.h"
#include "baton/runtime/forward_seed.h"
#include "differentiable.h"

namespace baton {

StageCompute::StageCompute(int rank, const Plan& plan, std::map<int, std::shared_ptr<Stage>> stages,
                           std::vector<std::shared_ptr<Validator>> validators, LossFunction loss,
                           bool scale_loss_by_microbatches, TargetCount count_targets,
                           AwaitReceive await_receive, GradientFinal gradient_final)
    : rank_(rank),
      plan_(plan),
      stages_(std::move(stages)),
      validators_(std::move(validators)),
      loss_function_(std::move(loss)),
      scale_loss_by_microbatches_(scale_loss_by_microbatches),
      count_targets_(std::move(count_targets)),
      await_receive_(std::move(await_receive)),
      gradient_final_(std::move(gradient_final)) {}

bool StageCompute::is_local(int stage) const {
  return plan_.stage_to_rank.at(static_cast<std::size_t>(stage)) == rank_;
}

Stage& StageCompute::stage(int index) {
  auto found = stages_.find(index);
  if (found == stages_.end()) {
    throw Error("stage " + std::to_string(index) + " is not on rank " + std::to_string(rank_) +
                " (the plan places it on rank " +
                std::to_string(plan_.stage_to_rank.at(static_cast<std::size_t>(index))) + ")");
  }
  return *found->second;
}

void StageCompute::set_metas(int stage, std::vector<TensorMeta> inputs,
                             std::vector<TensorMeta> outputs) {
  input_metas_[stage] = std::move(inputs);
  output_metas_[stage] = std::move(outputs);
}

void StageCompute::begin_step(StepData data) {
  states_.clear();
  recorded_losses_.clear();
  microbatch_losses_.clear();
  kept_ = KeptTally();
  peak_activations_ = 0;
  if (holds_first_stage() && !data.inputs) {
    throw Error("the step was given no inputs for stage 0, which rank " + std::to_string(rank_) +
                " holds");
  }
  if (holds_last_stage() && !data.targets) {
    throw Error("the step was given no targets for the last stage, which rank " +
                std::to_string(rank_) + " holds");
  }
  data_ = std::move(data);
  targets_.clear();
  target_counts_.clear();
  counted_targets_ = 0;
  scaled_loss_sum_ = 0.0;
  if (holds_last_stage() && count_targets_) {
    // All at once: the divisor of the first microbatch's loss is the count over all of them.
    for (int mb = 0; mb < plan_.num_microbatches; ++mb) {
      targets_.push_back(data_.targets(mb));
      target_counts_.push_back(count_targets_(targets_.back()));
      counted_targets_ += target_counts_.back();
    }
  }
}

void StageCompute::read_losses() {
  if (recorded_losses_.empty()) return;
  std::vector<at::Tensor> losses;
  for (const auto& recorded : recorded_losses_) losses.push_back(recorded.second.reshape({}));
  // One copy to the host for the whole step; in double, as item<double>() reads each.
  const at::Tensor values = at::stack(losses).to(at::kDouble).cpu();
  const double* value = values.data_ptr<double>();
  for (std::size_t i = 0; i < recorded_losses_.size(); ++i) {
    if (!count_targets_) {
      microbatch_losses_.push_back(value[i]);
      continue;
    }
    const double summed = value[i];
    const std::int64_t counted =
        target_counts_.at(static_cast<std::size_t>(recorded_losses_[i].first));
    microbatch_losses_.push_back(counted > 0 ? summed / static_cast<double>(counted) : 0.0);
    scaled_loss_sum_ += summed * loss_scale_;
  }
  recorded_losses_.clear();
}

double StageCompute::step_loss() const {
  if (count_targets_) return scaled_loss_sum_;
  double total = 0;
  for (double loss : microbatch_losses_) total += loss;
  return scale_loss_by_microbatches_ ? total / static_cast<double>(microbatch_losses_.size())
                                     : total;
}

void StageCompute::end_step() {
  states_.clear();
  data_ = StepData();  // lets go of what the step's data holds
}

void StageCompute::run(const Action& action) {
  switch (action.type) {
    case ActionType::kForward:
    case ActionType::kBackward:
    case ActionType::kBackwardInput:
    case ActionType::kBackwardWeight:
      break;
    case ActionType::kOverlapForwardBackward:
      for (const auto& part : action.sub_actions) run(part);
      return;
    case ActionType::kUnshard:
    case ActionType::kReshard:
      return;  // parameters are never sharded here: nothing to gather
    default:
      throw Error("cannot run action " + to_string(action));
  }
  require_needs(action);
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
    default:
      backward_weight_action(action.stage, action.microbatch);
      break;
  }
  record(action);
}

void StageCompute::require_needs(const Action& action) {
  for (const Need& need : needs_of(plan_, action)) {
    if (need.event == Event::kReceivedForward || need.event == Event::kReceivedBackward) continue;
    if (need.rank == rank_ && state(need.stage, need.microbatch).has(need.event)) continue;
    throw Error(to_string(action) + " runs before " +
                event_text(need.event, need.stage, need.microbatch) + " on rank " +
                std::to_string(rank_) + "; " + need.reason);
  }
}

void StageCompute::record(const Action& action) {
  MicrobatchState& st = state(action.stage, action.microbatch);
  st.made |= made_events(action.type);
  set_kept(st, kept_after(action.type, st.kept, recompute_stages_.count(action.stage) > 0));
}

void StageCompute::set_kept(MicrobatchState& st, Kept kept) {
  --kept_[st.kept];
  ++kept_[kept];
  st.kept = kept;
  peak_activations_ = std::max(peak_activations_, kept_.held());
}

KeptTally StageCompute::kept_in_memory() const {
  const auto has_graph = [](const at::Tensor& tensor) {
    return tensor.defined() && tensor.requires_grad();
  };
  KeptTally tally;
  for (const auto& entry : states_) {
    const MicrobatchState& st = entry.second;
    if (st.split) {
      ++tally[Kept::kWeightGraph];
    } else if (has_graph(st.loss) || std::any_of(st.outputs.begin(), st.outputs.end(), has_graph)) {
      ++tally[Kept::kGraph];
    } else if (!st.inputs.empty()) {
      ++tally[Kept::kInputs];
    } else {
      ++tally[Kept::kNothing];
    }
  }
  return tally;
}

// ---- checks --------------------------------------------------------------------------------

void StageCompute::check(const at::Tensor& tensor, const TensorMeta& meta, int s, int mb,
                         TensorRole role, int index) const {
  const TensorCheck described{s, mb, role, index, &meta};
  for (const auto& validator : validators_) {
    if (validator->wants(role)) validator->check(tensor, described);
  }
}

void StageCompute::check_all(const std::vector<at::Tensor>& tensors,
                             const std::vector<TensorMeta>& metas, int s, int mb,
                             TensorRole role) const {
  if (validators_.empty()) return;
  for (std::size_t i = 0; i < tensors.size() && i < metas.size(); ++i) {
    check(tensors[i], metas[i], s, mb, role, static_cast<int>(i));
  }
  if (tensors.size() != metas.size()) {
    throw ValidationError("stage " + std::to_string(s) + " " + tensor_role_name(role) +
                          "s (microbatch " + std::to_string(mb) + "): expected " +
                          std::to_string(metas.size()) + " tensors, got " +
                          std::to_string(tensors.size()));
  }
}

// ---- forward -------------------------------------------------------------------------------

void StageCompute::seed_forward(int s, int mb) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(
      forward_seed(*data_.random_seed, s, global_microbatch_offset_ + std::int64_t{mb}));
}

void StageCompute::forward(int s, int mb) {
  MicrobatchState& st = state(s, mb);
  const auto& metas = input_metas_.at(s);
  std::vector<at::Tensor> inputs;
  if (s == 0) {
    inputs = data_.inputs(mb);
  } else if (is_local(s - 1)) {
    MicrobatchState& previous = state(s - 1, mb);
    for (const auto& output : previous.outputs) inputs.push_back(output.detach());
    // Recomputed: its replay makes them again.
    if (previous.kept == Kept::kInputs) previous.outputs.clear();
  } else {
    const auto& arrived = await_receive_(Action{s, ActionType::kRecvForward, mb, {}});
    for (std::size_t i = 0; i < arrived.size(); ++i) {
      inputs.push_back(i < metas.size() ? from_wire(arrived[i], metas[i]) : arrived[i]);
    }
  }
  check_all(inputs, metas, s, mb, TensorRole::kForwardInput);
  if (s > 0) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (is_differentiable(metas[i])) inputs[i] = inputs[i].detach().requires_grad_(true);
    }
  }
  st.inputs = inputs;
  const bool recompute = recompute_stages_.count(s) > 0;
  if (data_.random_seed) seed_forward(s, mb);
  {
    // Recomputed: no graph now; replay_forward() builds it before the backward.
    std::optional<at::NoGradGuard> no_graph;
    if (recompute) no_graph.emplace();
    const AutocastScope autocast(autocast_device_, autocast_);
    st.outputs = stage(s).forward(inputs);
    check_all(st.outputs, output_metas_.at(s), s, mb, TensorRole::kForwardOutput);
    if (s == last_stage()) {
      const at::Tensor targets = count_targets_ ? targets_.at(static_cast<std::size_t>(mb))
                                                : data_.targets(mb);  // asked for once
      st.loss = scaled_loss(mb, st.outputs, targets, /*record=*/true);
      if (recompute) {
        st.targets = targets;
        st.outputs.clear();  // nothing leaves the last stage: the replay makes them again
      }
    }
  }
}

at::Tensor StageCompute::scaled_loss(int mb, const std::vector<at::Tensor>& outputs,
                                     const at::Tensor& targets, bool record) {
  at::Tensor loss = loss_function_(outputs, targets);
  if (record) recorded_losses_.emplace_back(mb, loss.detach());
  if (count_targets_) {
    // A sum over the microbatch's counted targets, scaled to the global batch's mean.
    loss = loss * loss_scale_;
  } else if (scale_loss_by_microbatches_) {
    loss = loss / plan_.num_microbatches;
  }
  // fp16 loss scaling, after the mean as GradScaler's scale(loss) is: a power of two scales
  // every gradient exactly.
  if (data_.loss_scale != 1.0) loss = loss * data_.loss_scale;
  return loss;
}

void StageCompute::replay_forward(int s, int mb) {
  MicrobatchState& st = state(s, mb);
  if (st.kept != Kept::kInputs) return;
  // The same inputs, the same draws: the same outputs, bit for bit, now with their graph. A
  // BatchNorm's running statistics were updated by the first forward; this one puts them back.
  const BuffersKept kept(stage(s).named_buffers());
  if (data_.random_seed) seed_forward(s, mb);
  const AutocastScope autocast(autocast_device_, autocast_);
  st.outputs = stage(s).forward(st.inputs);
  if (s == last_stage()) {
    st.loss = scaled_loss(mb, st.outputs, st.targets, /*record=*/false);
    st.targets = at::Tensor();
  }
  set_kept(st, Kept::kGraph);  // as kept_while() says: the backward runs over the whole graph
}

// ---- backward ------------------------------------------------------------------------------

// The gradients of stage s's outputs for microbatch mb, and the tensors they belong to.
void StageCompute::backward_roots(int s, int mb, std::vector<at::Tensor>* roots,
                                  std::vector<at::Tensor>* grads) {
  MicrobatchState& st = state(s, mb);
  if (s == last_stage()) {
    roots->push_back(st.loss);
    return;
  }
  const bool local = is_local(s + 1);
  std::vector<at::Tensor> arriving;
  if (local) {
    MicrobatchState& next = state(s + 1, mb);
    arriving = std::move(next.input_grads);
    next.input_grads.clear();
  } else {
    arriving = await_receive_(Action{s, ActionType::kRecvBackward, mb, {}});
  }
  // A peer sends gradients only for the differentiable outputs, in order; a local next stage
  // hands over one per output.
  const auto& metas = output_metas_.at(s);
  std::size_t received = 0;
  for (std::size_t i = 0; i < st.outputs.size(); ++i) {
    if (!is_differentiable(metas[i])) continue;
    at::Tensor grad = local ? (i < arriving.size() ? arriving[i] : at::Tensor())
                            : from_wire(arriving.at(received++), metas[i]);
    if (!grad.defined() || !st.outputs[i].requires_grad()) continue;
    check(grad, metas[i], s, mb, TensorRole::kGradientInput, static_cast<int>(i));
    roots->push_back(st.outputs[i]);
    grads->push_back(grad);
  }
}

void StageCompute::finish_backward(int s, int mb, std::vector<at::Tensor> input_grads) {
  MicrobatchState& st = state(s, mb);
  if (s > 0) {
    const auto& metas = input_metas_.at(s);
    for (std::size_t i = 0; i < input_grads.size() && i < metas.size(); ++i) {
      if (input_grads[i].defined()) {
        check(input_grads[i], metas[i], s, mb, TensorRole::kGradientOutput, static_cast<int>(i));
      }
    }
  }
  st.input_grads = std::move(input_grads);
}

std::vector<at::Tensor> StageCompute::stage_parameters(int s) {
  std::vector<at::Tensor> params;
  for (const auto& named : stage(s).named_parameters()) params.push_back(named.second);
  return params;
}

void StageCompute::full_backward_action(int s, int mb) {
  replay_forward(s, mb);
  std::vector<at::Tensor> roots, grads;
  backward_roots(s, mb, &roots, &grads);
  MicrobatchState& st = state(s, mb);
  std::vector<at::Tensor> input_grads =
      full_backward(roots, s == last_stage() ? std::vector<at::Tensor>() : grads, st.inputs);
  finish_backward(s, mb, std::move(input_grads));
  release_autograd(st);
}

void StageCompute::backward_input_action(int s, int mb) {
  replay_forward(s, mb);
  std::vector<at::Tensor> roots, grads;
  backward_roots(s, mb, &roots, &grads);
  MicrobatchState& st = state(s, mb);
  st.split = std::make_unique<SplitBackward>(roots, st.inputs, stage_parameters(s));
  finish_backward(s, mb,
                  st.split->backward_input(s == last_stage() ? std::vector<at::Tensor>() : grads));
}

void StageCompute::backward_weight_action(int s, int mb) {
  MicrobatchState& st = state(s, mb);
  st.split->backward_weight([&](std::size_t param) { gradient_final_(s, param); });
  st.split.reset();
  release_autograd(st);
}

// Activations are released as soon as the backward no longer needs them.
void StageCompute::release_autograd(MicrobatchState& st) {
  st.inputs.clear();
  st.outputs.clear();
  st.loss = at::Tensor();
}

// ---- what this rank sends ------------------------------------------------------------------

std::vector<at::Tensor> StageCompute::outgoing(const Action& send) {
  const int s = send.stage, mb = send.microbatch;
  require_needs(send);
  std::vector<at::Tensor> tensors;
  MicrobatchState& st = state(s, mb);
  if (send.type == ActionType::kSendForward) {
    for (const auto& tensor : st.outputs) tensors.push_back(to_wire(tensor.detach(), wire_));
    // Held by the send; a recomputed stage's replay makes them again.
    if (st.kept == Kept::kInputs) st.outputs.clear();
    return tensors;
  }
  const auto& metas = input_metas_.at(s);
  auto& grads = st.input_grads;
  for (std::size_t i = 0; i < metas.size(); ++i) {
    if (!is_differentiable(metas[i])) continue;
    // A stage input that got no gradient still owes the peer a message.
    const TensorMeta crossing = on_wire(metas[i], wire_);
    tensors.push_back(
        i < grads.size() && grads[i].defined()
            ? to_wire(grads[i], wire_)
            : at::zeros(crossing.shape,
                        at::TensorOptions().dtype(crossing.dtype).device(crossing.device)));
  }
  // Held by the send from here on. Keeping per-microbatch tensors to the end of the step
  // would interleave long-lived blocks with the backward's large temporaries, and the heap
  // would grow by about one weight gradient per microbatch.
  grads.clear();
  return tensors;
}

}  // namespace baton
