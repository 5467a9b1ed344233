#include "baton/runtime/executor.h"

#include <utility>

#include "baton/error.h"
#include "baton/log.h"
#include "baton/runtime/microbatch.h"
#include "baton/step_error.h"
#include "baton/topology.h"
#include "baton/wait_notice.h"
#include "fault_injection.h"
#include "gradient_norm.h"
#include "gradient_reducer.h"
#include "metadata_handshake.h"
#include "stage_compute.h"
#include "step_comms.h"
#include "step_spans.h"
#include "tied_gradients.h"

namespace baton {
namespace {

int rank_of(const Plan& plan, int stage) {
  return plan.stage_to_rank.at(static_cast<std::size_t>(stage));
}

// The stages given to the executor, by index, checked against the plan's placement.
std::map<int, std::shared_ptr<Stage>> place_stages(int rank, const Plan& plan,
                                                   std::vector<std::shared_ptr<Stage>> stages) {
  std::map<int, std::shared_ptr<Stage>> placed;
  for (auto& stage : stages) {
    const int index = stage->index();
    if (index < 0 || index >= plan.num_stages || rank_of(plan, index) != rank) {
      throw Error(
          "rank " + std::to_string(rank) + " was given " + stage->describe() +
          ", which the plan places on rank " +
          (index >= 0 && index < plan.num_stages ? std::to_string(rank_of(plan, index)) : "none"));
    }
    placed[index] = std::move(stage);
  }
  for (int index = 0; index < plan.num_stages; ++index) {
    if (rank_of(plan, index) == rank && !placed.count(index)) {
      throw Error("rank " + std::to_string(rank) + " holds stage " + std::to_string(index) +
                  " in the plan, but no stage object was given for it");
    }
  }
  return placed;
}

void check_plan_and_options(int rank, const Plan& plan, const ExecutorOptions& options) {
  if (rank < 0 || rank >= plan.num_ranks) {
    throw Error("rank " + std::to_string(rank) + " is outside the plan's " +
                std::to_string(plan.num_ranks) + " ranks");
  }
  // Transfer tags hold the microbatch in 20 bits and the stage in 18 (see comm_tags.h).
  if (plan.num_microbatches > (1 << 20) || plan.num_stages > (1 << 18)) {
    throw Error("the plan has " + std::to_string(plan.num_microbatches) + " microbatches and " +
                std::to_string(plan.num_stages) +
                " stages; at most 1048576 microbatches and 262144 stages are supported");
  }
  if (options.replicas < 1 || options.replica < 0 || options.replica >= options.replicas) {
    throw Error("replica " + std::to_string(options.replica) + " of " +
                std::to_string(options.replicas) + " does not exist");
  }
  if (options.bucket_bytes < 1) throw Error("gradient buckets need at least one byte");
  for (const int stage : options.recompute_stages) {
    if (stage < 0 || stage >= plan.num_stages) {
      throw Error("recompute names stage " + std::to_string(stage) + "; the plan has stages 0 to " +
                  std::to_string(plan.num_stages - 1));
    }
  }
}

// The step's data where the rank's stages are: on the CPU, as it is.
StepData on_device(StepData data, c10::Device device) {
  if (device.is_cpu()) return data;
  if (data.inputs) {
    data.inputs = [inputs = std::move(data.inputs), device](int mb) {
      std::vector<at::Tensor> moved;
      for (const auto& tensor : inputs(mb)) moved.push_back(tensor.to(device));
      return moved;
    };
  }
  if (data.targets) {
    data.targets = [targets = std::move(data.targets), device](int mb) {
      return targets(mb).to(device);
    };
  }
  return data;
}

}  // namespace

struct PipelineExecutor::Impl {
  Impl(int rank_, Plan plan_, std::vector<std::shared_ptr<Stage>> stages,
       std::shared_ptr<Transport> transport, std::vector<std::shared_ptr<Validator>> validators,
       LossFunction loss, ExecutorOptions options_)
      : rank(rank_),
        plan(std::move(plan_)),
        options(std::move(options_)),
        spans(options.observers),
        topology{options.replicas, plan.num_ranks},
        comms(rank, plan, topology.rank(options.replica, 0), std::move(transport),
              options.receives_match_by_tag, options.timeout, spans),
        compute(
            rank, plan, place_stages(rank, plan, std::move(stages)), std::move(validators),
            std::move(loss), options.scale_loss_by_microbatches, options.count_targets,
            [this](const Action& receive) -> const std::vector<at::Tensor>& {
              return await_receive(receive);
            },
            [this](int stage, std::size_t param) { reducer.gradient_final(stage, param); }),
        reducer(rank, plan.num_ranks, options.replica, options.replicas, options.bucket_bytes,
                options.timeout, spans),
        norm(topology, options.replica, rank, options.timeout),
        ties(topology, options.replica, rank, options.timeout),
        faults(options.fault) {
    compute.set_global_microbatch_offset(options.replica * plan.num_microbatches);
    compute.set_recompute_stages(options.recompute_stages);
  }

  int rank;
  Plan plan;
  ExecutorOptions options;
  StepSpans spans;
  Topology topology;  // this rank's place among the replicas' ranks
  StepComms comms;
  StageCompute compute;
  GradientReducer reducer;
  GradientNorm norm;
  TiedGradients ties;
  FaultInjection faults;
  bool ready = false;
  int training_step = 0;
  std::int64_t counted_targets = 0;  // this step's, over the global batch (token-mean losses)
  double waited_in_action = 0.0;     // seconds the current compute action waited for its data

  // Token-mean losses: the count of the whole global batch's targets, and the scale of each
  // microbatch's sum that makes the replicas' average of gradients their mean over it.
  void divide_by_targets() {
    counted_targets = compute.counted_targets();
    if (reducer.active()) {
      try {
        counted_targets = reducer.sum_over_replicas(counted_targets);
      } catch (const std::exception& error) {
        throw step_error(
            0, std::string("summing the counted targets across the replicas: ") + error.what());
      }
    }
    // No counted target: nothing to learn from (the caller says whether that is an error).
    // The replicas average their gradients, so each scales its sums by their number.
    const double replicas = reducer.active() ? static_cast<double>(options.replicas) : 1.0;
    compute.set_loss_scale(counted_targets > 0 ? replicas / static_cast<double>(counted_targets)
                                               : 0.0);
  }

  // Where a failure after the plan's last action is reported (0 for an empty column).
  int last_timestep() const {
    const std::size_t slots = plan.rank_steps.at(static_cast<std::size_t>(rank)).size();
    return slots > 0 ? static_cast<int>(slots) - 1 : 0;
  }

  StepError step_error(int timestep, const std::string& cause) const {
    return annotate_step_error(plan, rank, training_step, timestep, cause, options.replica,
                               options.replicas);
  }

  const std::vector<at::Tensor>& await_receive(const Action& receive) {
    const double since = spans.now();
    const std::vector<at::Tensor>& buffers =
        comms.await(receive, [&] { faults.before(receive, training_step); });
    waited_in_action += spans.now() - since;
    return buffers;
  }

  // A compute action; its span starts where waiting for its inputs ended.
  void run_compute(const Action& action, int timestep) {
    const double started = spans.now();
    waited_in_action = 0.0;
    {
      // Listening for final gradients ends with the action, however it ends.
      struct Listening {
        GradientReducer& reducer;
        ~Listening() { reducer.after_compute(); }
      } listening{reducer};
      reducer.before_compute(timestep);
      compute.run(action);
    }
    comms.after_compute(timestep);
    if (spans.observed()) reducer.poll();
    spans.add_compute(started + waited_in_action, spans.now(), action, timestep,
                      [this] { return compute.kept_in_memory(); });
  }

  void run_reduction(const Action& action, int timestep) {
    const double posted_at = spans.now();
    reducer.post(action.stage, timestep);
    spans.add(SpanKind::kPostReduction, posted_at, spans.now(), action);
  }

  // This rank's column of the plan, one slot per timestep (an action, or idle), in order.
  // ("step" in this file is the training step; a plan position is a timestep.)
  void run_plan() {
    const auto& timeline = plan.rank_steps.at(static_cast<std::size_t>(rank));
    const StepComms::Outgoing outgoing = [this](const Action& send) {
      return compute.outgoing(send);
    };
    std::size_t timestep = 0;
    while (timestep < timeline.size()) {
      const std::size_t first = timestep;
      try {
        if (!timeline[timestep]) {
          ++timestep;
        } else if (is_comm(timeline[timestep]->type)) {
          // Consecutive transfers are posted together (a batch for the transport).
          std::vector<Action> transfers;
          while (timestep < timeline.size() && timeline[timestep] &&
                 is_comm(timeline[timestep]->type)) {
            transfers.push_back(*timeline[timestep++]);
          }
          comms.post_run(transfers, outgoing);
        } else {
          const Action& action = *timeline[timestep];
          faults.before(action, training_step);
          if (action.type == ActionType::kReduceGrad) {
            run_reduction(action, static_cast<int>(timestep));
          } else {
            run_compute(action, static_cast<int>(timestep));
          }
          ++timestep;
        }
      } catch (const StepError&) {
        throw;
      } catch (const std::exception& error) {
        throw step_error(static_cast<int>(first), error.what());
      }
    }
    const int last = last_timestep();
    try {
      comms.finish_step();
    } catch (const std::exception& error) {
      throw step_error(last, std::string("finishing the step: ") + error.what());
    }
    try {
      result.exposed_reduce_seconds = reducer.finish();
    } catch (const ReductionFailure& failure) {
      throw step_error(failure.timestep(), failure.what());
    }
  }

  StepResult result;
};

PipelineExecutor::PipelineExecutor(int rank, Plan lowered_plan,
                                   std::vector<std::shared_ptr<Stage>> stages,
                                   std::shared_ptr<Transport> transport,
                                   std::vector<std::shared_ptr<Validator>> validators,
                                   LossFunction loss, ExecutorOptions options) {
  check_plan_and_options(rank, lowered_plan, options);
  impl_ =
      std::make_unique<Impl>(rank, std::move(lowered_plan), std::move(stages), std::move(transport),
                             std::move(validators), std::move(loss), std::move(options));
}

PipelineExecutor::~PipelineExecutor() = default;

StepData whole_batch(const std::vector<at::Tensor>& inputs, const at::Tensor& targets,
                     int microbatches, int split_dim) {
  StepData data;
  if (!inputs.empty()) {
    auto chunks = std::make_shared<std::vector<std::vector<at::Tensor>>>(
        split_microbatches(inputs, microbatches, split_dim));
    data.inputs = [chunks](int microbatch) {
      return chunks->at(static_cast<std::size_t>(microbatch));
    };
  }
  if (targets.defined()) {
    auto chunks = std::make_shared<std::vector<std::vector<at::Tensor>>>(
        split_microbatches({targets}, microbatches, split_dim));
    data.targets = [chunks](int microbatch) {
      return chunks->at(static_cast<std::size_t>(microbatch)).at(0);
    };
  }
  return data;
}

void PipelineExecutor::setup(const std::vector<at::Tensor>& inputs) {
  const bool first = impl_->compute.holds_first_stage();
  setup(whole_batch(first ? inputs : std::vector<at::Tensor>(), at::Tensor(),
                    impl_->plan.num_microbatches, impl_->options.split_dim));
}

void PipelineExecutor::setup(const StepData& first_step) {
  Impl& impl = *impl_;
  std::vector<TensorMeta> first_inputs;
  if (impl.compute.holds_first_stage()) {
    if (!first_step.inputs) throw Error("setup: the rank of stage 0 was given no inputs");
    for (const auto& tensor : first_step.inputs(0)) {
      // Where run_step() puts them.
      first_inputs.push_back(TensorMeta::of(tensor.contiguous().to(impl.options.device)));
    }
  }
  HandshakeContext context{impl.rank,
                           impl.plan,
                           impl.comms.transport(),
                           impl.options.timeout,
                           impl.comms.transport_rank(0),
                           impl.options.stage_names,
                           {},
                           impl.options.device};
  for (const auto& [index, stage] : impl.compute.stages()) {
    const WaitNotice notice("runtime", "the neighbours of stage " + std::to_string(index) +
                                           " to agree on the tensors it receives and sends");
    StageMetas metas = exchange_stage_metadata(context, *stage, first_inputs);
    impl.compute.set_metas(index, std::move(metas.inputs), std::move(metas.outputs));
  }
  impl.comms.allocate_buffers(impl.compute.input_metas(), impl.compute.output_metas());
  impl.ties.join(impl.options.all_reduce, impl.plan, impl.compute.stages(),
                 impl.options.tied_parameters);
  impl.reducer.join(impl.options.all_reduce, impl.plan, impl.compute.stages(),
                    impl.ties.synchronised_names());
  if (impl.options.measure_gradient_norm) {
    std::set<std::string> counted_elsewhere = impl.options.norm_counted_elsewhere;
    counted_elsewhere.insert(impl.ties.counted_elsewhere().begin(),
                             impl.ties.counted_elsewhere().end());
    impl.norm.join(impl.options.all_reduce, impl.compute.stages(), counted_elsewhere);
  }
  const std::size_t stages = impl.compute.stages().size();
  const RecvBuffers& buffers = impl.comms.buffers();
  BATON_LOG_INFO("runtime", "stage shapes agreed with the neighbours of "
                                << stages << " stage" << (stages == 1 ? "" : "s") << "; "
                                << buffers.allocations() << " receive buffers ("
                                << buffers.bytes() / 1024 << " KiB) preallocated");
  impl.ready = true;
}

StepResult PipelineExecutor::run_step(const std::vector<at::Tensor>& inputs,
                                      const at::Tensor& targets) {
  const bool first = impl_->compute.holds_first_stage();
  const bool last = impl_->compute.holds_last_stage();
  return run_step(whole_batch(first ? inputs : std::vector<at::Tensor>(),
                              last ? targets : at::Tensor(), impl_->plan.num_microbatches,
                              impl_->options.split_dim));
}

StepResult PipelineExecutor::run_step(const StepData& data) {
  Impl& impl = *impl_;
  if (!impl.ready) throw Error("run_step() before setup()");
  ++impl.training_step;
  impl.result = StepResult();
  impl.compute.begin_step(on_device(data, impl.options.device));
  impl.comms.begin_step(impl.training_step);
  impl.reducer.begin_step();
  if (impl.compute.holds_last_stage() && impl.compute.counts_targets()) impl.divide_by_targets();
  impl.spans.start(impl.training_step);
  impl.run_plan();
  try {
    impl.ties.synchronise();
  } catch (const std::exception& error) {
    throw impl.step_error(impl.last_timestep(),
                          std::string("summing the gradients of tied parameters: ") + error.what());
  }

  impl.compute.read_losses();
  StepResult& result = impl.result;
  result.step_seconds = impl.spans.now();
  result.compute_seconds = impl.spans.compute_seconds();
  result.comm_seconds = impl.spans.comm_seconds();
  result.peak_activations = impl.compute.peak_activations();
  result.microbatch_losses = impl.compute.microbatch_losses();
  if (impl.compute.holds_last_stage()) {
    result.has_loss = true;
    result.loss = impl.compute.step_loss();
    result.counted_targets = impl.counted_targets;
    if (impl.reducer.active()) {
      try {
        result.loss = impl.reducer.average_loss(result.loss);
      } catch (const std::exception& error) {
        throw impl.step_error(impl.last_timestep(), std::string("averaging the loss across the "
                                                                "replicas: ") +
                                                        error.what());
      }
    }
  }
  if (impl.options.measure_gradient_norm) {
    try {
      result.grad_norm = impl.norm.measure();
      result.has_grad_norm = true;
    } catch (const std::exception& error) {
      throw impl.step_error(
          impl.last_timestep(),
          std::string("summing the gradient's norm over the pipeline: ") + error.what());
    }
  }
  impl.compute.end_step();
  impl.comms.end_step();
  return result;
}

void PipelineExecutor::check_tied_copies() {
  impl_->ties.check_copies();
}

const RecvBuffers& PipelineExecutor::recv_buffers() const {
  return impl_->comms.buffers();
}
const std::vector<TensorMeta>& PipelineExecutor::input_metas(int stage) const {
  return impl_->compute.input_metas(stage);
}
const std::vector<TensorMeta>& PipelineExecutor::output_metas(int stage) const {
  return impl_->compute.output_metas(stage);
}
int PipelineExecutor::rank() const {
  return impl_->rank;
}
const Plan& PipelineExecutor::plan() const {
  return impl_->plan;
}

}  // namespace baton
