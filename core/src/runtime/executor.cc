#include "baton/runtime/executor.h"

#include <utility>

#include "baton/error.h"
#include "baton/log.h"
#include "baton/plan/gradient_reduction.h"
#include "baton/runtime/step_spans.h"
#include "baton/step_error.h"
#include "baton/topology.h"
#include "baton/wait_notice.h"
#include "executor_checks.h"
#include "fault_injection.h"
#include "metadata_handshake.h"
#include "stage_compute.h"
#include "step_comms.h"
#include "step_data.h"
#include "wire_dtype.h"

namespace baton {

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
            [this](int stage, std::size_t param) {
              if (sync) sync->gradient_final(stage, param);
            }),
        faults(options.fault) {
    // Forward only (evaluation): nothing to synchronise.
    if (rank_computes_gradients(plan, rank)) {
      GradientSyncOptions gradients = options.gradients;
      gradients.hook_every_gradient = faults.injects_nonfinite_gradients();
      sync = std::make_unique<GradientSync>(
          SyncPlace{topology, options.replica, rank, options.device, options.timeout},
          std::move(gradients), spans);
    }
    compute.set_global_microbatch_offset(options.replica * plan.num_microbatches);
    compute.set_recompute_stages(options.recompute_stages);
    compute.set_autocast(options.device, options.autocast);
    compute.set_wire(options.wire);
  }

  int rank;
  Plan plan;
  ExecutorOptions options;
  StepSpans spans;
  Topology topology;  // this rank's place among the replicas' ranks
  StepComms comms;
  StageCompute compute;
  std::unique_ptr<GradientSync> sync;  // null for a plan without backward
  FaultInjection faults;
  bool ready = false;
  int training_step = 0;
  std::int64_t counted_targets = 0;  // this step's, over the global batch (token-mean losses)
  double waited_in_action = 0.0;     // seconds the current compute action waited for its data

  // Token-mean losses: the count of the whole global batch's targets, and the scale of each
  // microbatch's sum that makes the replicas' average of gradients their mean over it.
  void divide_by_targets() {
    const bool averaged = sync && sync->averages_replicas();
    counted_targets =
        averaged ? sync->sum_targets(compute.counted_targets()) : compute.counted_targets();
    // No counted target: nothing to learn from (the caller says whether that is an error).
    // The replicas average their gradients, so each scales its sums by their number.
    const double replicas = averaged ? static_cast<double>(options.replicas) : 1.0;
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
    if (sync) {
      // Listening for final gradients ends with the action, however it ends.
      struct Listening {
        GradientSync& sync;
        ~Listening() { sync.after_compute(); }
      } listening{*sync};
      sync->before_compute(timestep);
      if (const auto value = faults.nonfinite_gradients(action, training_step)) {
        sync->inject_nonfinite(action.stage, *value);
      }
      compute.run(action);
    } else {
      compute.run(action);
    }
    comms.after_compute(timestep);
    if (sync && spans.observed()) sync->poll();
    spans.add_compute(started + waited_in_action, spans.now(), action, timestep,
                      [this] { return compute.kept_in_memory(); });
  }

  void run_reduction(const Action& action, int timestep) {
    const double posted_at = spans.now();
    if (sync) sync->post(action.stage, timestep);
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
                           impl.options.device,
                           impl.options.autocast};
  for (const auto& [index, stage] : impl.compute.stages()) {
    const WaitNotice notice("runtime", "the neighbours of stage " + std::to_string(index) +
                                           " to agree on the tensors it receives and sends");
    StageMetas metas = exchange_stage_metadata(context, *stage, first_inputs);
    impl.compute.set_metas(index, std::move(metas.inputs), std::move(metas.outputs));
  }
  impl.comms.allocate_buffers(on_wire(impl.compute.input_metas(), impl.options.wire),
                              on_wire(impl.compute.output_metas(), impl.options.wire));
  if (impl.sync) impl.sync->join(impl.plan, impl.compute.stages());
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
  StepResult& result = impl.result;
  impl.compute.begin_step(on_device(data, impl.options.device));
  impl.comms.begin_step(impl.training_step);
  const bool has_loss = impl.compute.holds_last_stage();
  try {
    if (impl.sync) impl.sync->begin_step(data.loss_scale);
    if (has_loss && impl.compute.counts_targets()) impl.divide_by_targets();
    impl.spans.start(impl.training_step);
    impl.run_plan();
    impl.compute.read_losses();
    result.loss = has_loss ? impl.compute.step_loss() : 0.0;
    if (impl.sync) {
      const SyncResult synced = impl.sync->finish(
          impl.last_timestep(), has_loss ? std::optional<double>(result.loss) : std::nullopt);
      result.exposed_reduce_seconds = synced.exposed_seconds;
      result.has_grad_norm = synced.has_norm;
      result.grad_norm = synced.norm;
      result.nonfinite_gradients = synced.nonfinite;
      result.loss = synced.loss;
    }
  } catch (const SyncFailure& failure) {
    throw impl.step_error(failure.timestep(), failure.what());
  }
  result.step_seconds = impl.spans.now();
  result.compute_seconds = impl.spans.compute_seconds();
  result.comm_seconds = impl.spans.comm_seconds();
  result.peak_activations = impl.compute.peak_activations();
  result.microbatch_losses = impl.compute.microbatch_losses();
  if (has_loss) {
    result.has_loss = true;
    result.counted_targets = impl.counted_targets;
  }
  impl.compute.end_step();
  impl.comms.end_step();
  return result;
}

void PipelineExecutor::check_tied_copies() {
  if (impl_->sync) impl_->sync->check_tied_copies();
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
