#include "trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "batch_prefetcher.h"
#include "baton/error.h"
#include "baton/log.h"
#include "baton/runtime/executor.h"
#include "checkpoint.h"
#include "equivalence_dump.h"
#include "evaluation.h"
#include "failure_record.h"
#include "gradient_clipping.h"
#include "heartbeat.h"
#include "injected_failure.h"
#include "loss_scaler.h"
#include "master_weights.h"
#include "optimizer_factory.h"
#include "progress.h"
#include "rank_compute.h"
#include "rank_connections.h"
#include "rank_pipeline.h"
#include "resolved_config.h"
#include "run_folder.h"
#include "run_settings.h"
#include "run_trace.h"
#include "stage_cuts.h"
#include "step_seed.h"
#include "stopwatch.h"
#include "tuning/auto_schedule.h"
#include "world_info.h"

namespace baton_app {

namespace {

// The ranks this rank exchanges tensors with: those holding the stage before or after one
// of its own in its pipeline, and its replicas in the others (they reduce gradients together).
std::vector<int> pipeline_neighbours(const baton::Plan& plan, const WorldInfo& world) {
  const int rank = world.pipeline_rank;
  std::vector<int> neighbours;
  for (const int replica : world.topology().replicas_of(rank)) {
    if (replica != world.rank) neighbours.push_back(replica);
  }
  const int stages = static_cast<int>(plan.stage_to_rank.size());
  for (int stage = 0; stage < stages; ++stage) {
    if (plan.stage_to_rank[stage] != rank) continue;
    for (const int other : {stage - 1, stage + 1}) {
      if (other < 0 || other >= stages) continue;
      const int peer = world.rank_in_replica(plan.stage_to_rank[other]);
      if (plan.stage_to_rank[other] != rank &&
          std::find(neighbours.begin(), neighbours.end(), peer) == neighbours.end()) {
        neighbours.push_back(peer);
      }
    }
  }
  return neighbours;
}

// Printed once by rank 0 when there are replicas: who is who.
std::string describe_layout(const WorldInfo& world) {
  std::string text = "layout: " + std::to_string(world.replicas) + " replicas x " +
                     std::to_string(world.pipeline_ranks) + " pipeline ranks (rank = replica x " +
                     std::to_string(world.pipeline_ranks) + " + pipeline rank):";
  for (int replica = 0; replica < world.replicas; ++replica) {
    text += " replica " + std::to_string(replica) + " = ranks " +
            std::to_string(world.topology().rank(replica, 0)) + ".." +
            std::to_string(world.topology().rank(replica, world.pipeline_ranks - 1)) +
            (replica + 1 < world.replicas ? ";" : "");
  }
  return text;
}

}  // namespace

namespace {

// Who this rank is and what it runs with: the world, the run's settings, the compute threads,
// the plan and, with schedule.name: auto, the store (the ranks meet first, so that rank 0 can
// measure the model and every rank run what it chose: docs/auto.md) and the choice. The
// configuration stops here: it is resolved at the front door (resolved_config.h) and read
// into the settings and the plan, which everything after takes.
struct RankStart {
  WorldInfo world;
  RunSettings settings;
  RankCompute compute;
  RankPlan plan;  // moved into the pipeline when it is built
  std::shared_ptr<baton::Store> store;
  std::string schedule_choice;  // schedule: auto's, recorded in every checkpoint's manifest
  std::unique_ptr<RunFolderClaim> folder;  // rank 0: the run folder is this run's
};

// schedule.name: auto: what rank 0 chose (or on --resume kept), every rank's.
std::string choose_schedule(const baton::Config& config, const WorldInfo& world,
                            const RunSettings& settings, const std::shared_ptr<baton::Store>& store,
                            const TrainOptions& options) {
  AutoScheduleContext context;
  context.rank = world.rank;
  context.ranks = world.world_size;
  context.store = store;
  context.timeout = settings.timeout;
  context.run_dir = settings.run_dir;
  context.data_dir = options.data_dir;
  context.resume = options.resume;
  // Rank 0 chooses; on --resume it keeps the choice the newest checkpoint recorded.
  if (options.resume && world.rank == 0 && !settings.checkpoint.dir.empty()) {
    const std::string checkpoint = latest_checkpoint(settings.checkpoint.dir);
    if (!checkpoint.empty()) {
      context.recorded_choice = schedule_choice_in(checkpoint);
      context.recorded_choice_in = checkpoint + "/manifest.json";
    }
  }
  return choose_auto_schedule(config, context);
}

RankStart start_rank(const baton::Config& loaded, const TrainOptions& options) {
  RankStart start;
  const WorldSettings world_settings = read_world_settings(loaded);
  start.world = with_data_parallel(world_from_environment(), world_settings.data_parallel);
  const WorldInfo& world = start.world;
  set_up_logging(world_settings, world);
  check_world_size(world_settings, world);
  baton::Config config = loaded;
  baton::ConfiguredPlugins plugins = resolve_run_config(config);
  if (world.rank == 0 && world.replicas > 1) std::cout << describe_layout(world) << std::endl;
  start.settings = read_run_settings(config);
  const RunSettings& settings = start.settings;
  // Before anything is written into the run folder.
  if (world.rank == 0) start.folder = claim_run_folder(settings, options.resume, options.overwrite);
  check_checkpoint_folder_writable(settings, world.replica == 0);
  // Before any tensor work: LibTorch's pools are sized once.
  start.compute = set_up_compute(settings.world, world);
  if (world.rank == 0) {
    std::cout << "compute: " << start.compute.describe() << std::endl;
    if (start.compute.blas.reference)
      std::cerr << "warning: " << start.compute.blas.advice << std::endl;
  }
  if (baton::schedule_chosen_at_start(config)) {
    start.store = meet_the_other_ranks(settings, world);
    start.schedule_choice = choose_schedule(config, world, settings, start.store, options);
    config = with_schedule_choice(config, start.schedule_choice,
                                  settings.run_dir + "/schedule_choice.json");
    plugins = resolve_run_config(config);
    start.settings = read_run_settings(config);
  }
  // The plan, checked before the ranks meet (unless schedule: auto met them already).
  start.plan = plan_rank(config, std::move(plugins), world);
  return start;
}

// What the step loop works with, all set up.
struct RankRun {
  const RankStart& start;
  RankPipeline& pipeline;
  RunTrace& trace;
  FailureRecord& failures;
  InjectedSignal signal_at_step;
  std::string schedule_name;
  int microbatches;
};

// The run's checkpoints: replica 0 writes them (the replicas hold the same parameters); every
// replica reads its pipeline rank's files.
std::unique_ptr<Checkpointer> make_checkpointer(const RankRun& run) {
  const WorldInfo& world = run.start.world;
  CheckpointSettings settings = run.start.settings.checkpoint;
  settings.kill_while_writing_step = run.signal_at_step.kill_in_checkpoint_step;
  settings.schedule_choice = run.start.schedule_choice;
  settings.run_name = run.start.settings.name;
  if (run.start.folder) settings.run_id = run.start.folder->run_id();
  settings.writes = world.replica == 0;
  settings.data_parallel = world.replicas;
  return std::make_unique<Checkpointer>(
      settings, world.pipeline_rank, world.pipeline_ranks, run.start.store,
      run.start.settings.timeout, run.pipeline.local.named_params, run.pipeline.local.named_buffers,
      run.pipeline.optimizer.get());
}

std::unique_ptr<Progress> make_progress(const RankRun& run) {
  const WorldInfo& world = run.start.world;
  const RunSettings& settings = run.start.settings;
  nlohmann::ordered_json header = {{"run", settings.name},
                                   {"ranks", world.world_size},
                                   {"data_parallel", world.replicas},
                                   {"schedule", run.schedule_name},
                                   {"microbatches", run.microbatches},
                                   {"cuts", format_cuts(run.pipeline.local.bounds)},
                                   {"data_prefetch", run.pipeline.prefetch_data}};
  run.start.compute.add_json_fields(header);
  return std::make_unique<Progress>(settings.progress, world, run.start.store, settings.steps,
                                    run.pipeline.plan.plan(), header.dump());
}

// The step to start from: 1, or with --resume the one after the newest checkpoint, whose
// parameters (and optimizer state) are restored into the rank's stages.
int first_step(const RankRun& run, Checkpointer& checkpointer, LossScaler& scaler, bool resume) {
  if (!resume) return 1;
  const WorldInfo& world = run.start.world;
  const int steps = run.start.settings.steps;
  const Checkpointer::Restored restored = checkpointer.restore_latest();
  if (run.pipeline.masters) run.pipeline.masters->after_load();  // the stages take the masters
  if (scaler.enabled() && restored.loss_scale) {
    scaler.restore(*restored.loss_scale);
  } else if (scaler.enabled() && world.rank == 0) {
    std::cout << "--resume: the checkpoint records no loss scale (its run did not scale the "
                 "loss): precision.loss_scale starts at precision.loss_scale_init"
              << std::endl;
  }
  if (restored.step > steps) {
    throw baton::ConfigError("--resume: the newest checkpoint (" + restored.folder +
                             ") is at step " + std::to_string(restored.step) +
                             ", past run.steps (" + std::to_string(steps) +
                             "): nothing is left to train; raise run.steps to train on, or "
                             "take the checkpoint as it is (baton export)");
  }
  if (restored.step == steps && world.rank == 0) {
    std::cout << "--resume: the newest checkpoint (" << restored.folder << ") is at step "
              << restored.step << ", run.steps: nothing is left to train" << std::endl;
  }
  if (world.rank == 0) {
    std::cout << "resuming after step " << restored.step << " from " << restored.folder
              << std::endl;
  }
  return restored.step + 1;
}

// What each step is fed: a rank makes only the part of each microbatch its stages use,
// inputs for the first stage, targets for the last; a few microbatches ahead on a thread of
// their own (data.prefetch), or each when the step needs it. And what a step counts for the
// run's throughput (every replica's rows; a language model's tokens).
class StepFeed {
 public:
  StepFeed(RankPipeline& pipeline, const WorldInfo& world, std::uint64_t seed)
      : uses_inputs_(pipeline.plan.plan().stage_to_rank.front() == world.pipeline_rank),
        uses_targets_(pipeline.plan.plan().stage_to_rank.back() == world.pipeline_rank),
        seed_(seed),
        prefetcher_(*pipeline.batches, pipeline.plan.plan().num_microbatches, uses_inputs_,
                    uses_targets_,
                    pipeline.prefetch_data && (uses_inputs_ || uses_targets_) ? 2 : 0) {
    const at::Tensor& first_input = pipeline.first_microbatch.inputs.at(0);
    samples_per_step_ = pipeline.batches->rows_per_step() * world.replicas;
    // Integer inputs are token ids: a language model's throughput is tokens/s.
    tokens_per_step_ =
        at::isFloatingType(first_input.scalar_type()) || first_input.scalar_type() == at::kBool
            ? 0
            : first_input.numel() / first_input.size(0) * samples_per_step_;
  }

  // Randomness inside the model (dropout): each stage's forward of a microbatch is seeded
  // from the step's seed, the stage and the microbatch alone (baton/runtime/forward_seed.h),
  // so a run trains the same on any schedule or layout of its split and a resumed run
  // reproduces an uninterrupted one exactly.
  baton::StepData data(int step) {
    baton::StepData data;
    data.random_seed = baton_models::step_seed(seed_, step);
    if (uses_inputs_) {
      data.inputs = [this, step](int microbatch) { return prefetcher_.inputs(step, microbatch); };
    }
    if (uses_targets_) {
      data.targets = [this, step](int microbatch) { return prefetcher_.targets(step, microbatch); };
    }
    return data;
  }

  std::int64_t samples_per_step() const { return samples_per_step_; }
  std::int64_t tokens_per_step() const { return tokens_per_step_; }

 private:
  const bool uses_inputs_;
  const bool uses_targets_;
  const std::uint64_t seed_;
  baton_models::BatchPrefetcher prefetcher_;
  std::int64_t samples_per_step_ = 0;
  std::int64_t tokens_per_step_ = 0;
};

// A step's loss must be one to train on: counted over at least one target, and finite
// (training on from a nan or inf loss changes nothing useful and hides the cause).
void check_step_loss(const RankPipeline& pipeline, const baton::StepResult& result, int step,
                     bool first) {
  if (!result.has_loss) return;
  if (pipeline.model.count_targets && result.counted_targets == 0) {
    throw baton::Error("step " + std::to_string(step) +
                       ": no target of the batch is counted by the loss (every one equals "
                       "model.ignore_index " +
                       std::to_string(pipeline.model.ignore_index) +
                       "): the mean over its counted targets is undefined; the data's "
                       "targets are all padding");
  }
  if (!std::isfinite(result.loss)) {
    throw baton::Error(
        "step " + std::to_string(step) + ": the loss is " + std::to_string(result.loss) +
        (first ? " from the first batch: the data (non-finite inputs, targets the loss "
                 "ignores), the model's initial weights or a scripted loss give non-finite "
                 "values"
               : ": training diverged (try a smaller optimizer.lr), or this step's batch "
                 "holds non-finite values") +
        "; the run stops instead of training on it");
  }
}

// What a step did, beside the executor's result.
struct StepOutcome {
  baton::StepResult result;
  double lr = NAN;             // the rate the schedule gives the step (used unless skipped)
  LossScaleReport loss_scale;  // precision.loss_scale's part
};

// One training step: the pipeline's forward and backward, then the norm and the clipping
// before the update, as the unpipelined loop runs them, at the rate the schedule gives this
// step. With loss scaling, as GradScaler's loop: the backward from the scaled loss, the
// gradients unscaled before the norm (by the sync), and a step whose gradients overflowed
// on any rank skipped by every rank (no clipping, no update), the scale moved on.
StepOutcome train_step(RankRun& run, StepFeed& feed, LossScaler& scaler, int step,
                       EquivalenceDump& dump) {
  RankPipeline& pipeline = run.pipeline;
  clear_gradients(pipeline.local.params);
  run.trace.begin_step(step);
  baton::StepData data = feed.data(step);
  data.loss_scale = scaler.scale();
  StepOutcome outcome;
  outcome.loss_scale.enabled = scaler.enabled();
  outcome.loss_scale.scale = scaler.scale();
  outcome.result = pipeline.executor->run_step(data);
  const baton::StepResult& result = outcome.result;
  if (step == 1) dump.record_gradients(pipeline.local.named_params);
  outcome.loss_scale.skipped = scaler.update(result.nonfinite_gradients, step);
  outcome.loss_scale.skipped_steps = scaler.state().skipped_steps;
  outcome.lr = pipeline.optimizer_settings.schedule.lr_at(step, pipeline.optimizer_settings.lr,
                                                          run.start.settings.steps);
  std::optional<double> norm;
  if (result.has_grad_norm) {
    norm = result.grad_norm;
  } else if (outcome.loss_scale.skipped && pipeline.optimizer_settings.clip_grad_norm > 0) {
    norm = NAN;  // skipped before it was measured
  }
  dump.record_step(outcome.lr, norm);
  if (outcome.loss_scale.skipped) {
    if (run.start.world.rank == 0) {
      BATON_LOG_INFO("precision", "step " << step << " skipped: a gradient overflowed at loss "
                                          << "scale " << outcome.loss_scale.scale
                                          << "; the scale is now " << scaler.scale());
    }
    return outcome;
  }
  if (result.has_grad_norm) {
    clip_gradients(pipeline.local.params, result.grad_norm,
                   pipeline.optimizer_settings.clip_grad_norm, step);
  }
  set_learning_rate(*pipeline.optimizer, outcome.lr);
  pipeline.optimizer->step();
  if (pipeline.masters) pipeline.masters->after_step();
  return outcome;
}

// The steps, from the first (or the one after the restored checkpoint) to run.steps.
// The executor's set-up (the neighbours agree on tensors, buffers are made) on the first
// microbatch, then the model's own check of its stages.
void set_up_executor(RankPipeline& pipeline) {
  baton::StepData first_data;
  first_data.inputs = [&](int) { return pipeline.first_microbatch.inputs; };
  pipeline.executor->setup(first_data);
  if (pipeline.model.verify) {
    // After setup, so that stages that do not fit together fail there, on both sides,
    // naming both; this catches a model whose forward is more than its children.
    std::vector<at::Tensor> sample;
    for (const auto& input : pipeline.first_microbatch.inputs) {
      sample.push_back(input.slice(0, 0, 1));
    }
    pipeline.model.verify(sample);
  }
}

void save_checkpoint(RankRun& run, Checkpointer& checkpointer, int step) {
  // Tied weights' copies are one tensor in the model: a checkpoint must not record two.
  run.pipeline.executor->check_tied_copies();
  const std::string written = checkpointer.save(step, run.schedule_name);
  if (run.start.world.rank == 0) {
    BATON_LOG_INFO("checkpoint", "step " << step << " written to " << written);
  }
}

void run_steps(RankRun& run, const TrainOptions& options) {
  const WorldInfo& world = run.start.world;
  const RunSettings& settings = run.start.settings;
  RankPipeline& pipeline = run.pipeline;
  baton::PipelineExecutor& executor = *pipeline.executor;
  const std::shared_ptr<baton::Transport>& transport = pipeline.transport;
  const auto checkpointer = make_checkpointer(run);
  LossScaler scaler(settings.precision.loss_scale);
  checkpointer->record_loss_scale(&scaler);
  const int first = first_step(run, *checkpointer, scaler, options.resume);
  const auto progress = make_progress(run);
  progress->resume_after(first - 1);
  EquivalenceDump dump(options.dump_dir, world.rank);
  Evaluation evaluation(settings, pipeline, world, options.data_dir);
  // The parameters the first step starts from, so that a reference outside baton can start
  // from the same point (tests/pipeline/torch_reference.py).
  dump.record_initial(pipeline.local.named_params);
  dump.record_threads(run.start.compute.threads);
  std::vector<double> losses;
  std::int64_t buffers_after_first_step = 0;
  StepFeed feed(pipeline, world, settings.seed);
  // A neighbour that hangs stops the run at the heartbeat period, naming it, instead of at
  // world.timeout_s: aborting the transport fails this rank's pending transfers at once.
  auto heartbeat = std::make_unique<Heartbeat>(
      run.start.store, world.rank, pipeline_neighbours(pipeline.plan.plan(), world),
      settings.heartbeat, [transport](const std::string& why) {
        if (transport) transport->abort(why);
      });
  std::string trace_path;
  try {
    set_up_executor(pipeline);
    for (int step = first; step <= settings.steps; ++step) {
      if (step == run.signal_at_step.step) std::raise(run.signal_at_step.signal);
      const auto started = std::chrono::steady_clock::now();
      const StepOutcome outcome = train_step(run, feed, scaler, step, dump);
      const baton::StepResult& result = outcome.result;
      if (step == 1) buffers_after_first_step = executor.recv_buffers().allocations();
      check_step_loss(pipeline, result, step, step == first);
      if (result.has_loss) losses.push_back(result.loss);
      const double seconds = seconds_since(started);
      // After the update, as a training loop evaluates; not counted in the step's time.
      const double eval_loss = evaluation.due(step, settings.steps) ? evaluation.run() : NAN;
      if (std::isfinite(eval_loss)) dump.record_eval(step, eval_loss);
      progress->step_done(step, result, seconds, feed.samples_per_step(), feed.tokens_per_step(),
                          outcome.lr, eval_loss, outcome.loss_scale);
      for (const auto& observer : options.training_observers) {
        observer->step_ended(step,
                             std::chrono::duration<double>(started.time_since_epoch()).count(),
                             seconds, result);
      }
      if (step % baton::kTrimEverySteps == 0) baton::release_free_heap_pages();
      if (checkpointer->due(step, settings.steps)) save_checkpoint(run, *checkpointer, step);
    }
    heartbeat.reset();  // done training: a neighbour that finishes later must not think it hung
    for (const auto& observer : options.training_observers) {
      observer->trained({pipeline, world, settings.timeout});
    }
    trace_path = run.trace.finish(pipeline.plan.plan(), pipeline.recompute_stages);
  } catch (const baton::Error& error) {
    run.failures.record();
    // Peers blocked on this rank fail fast instead of waiting for their timeout.
    if (transport) {
      transport->abort("rank " + std::to_string(world.rank) + " failed: " + error.what());
    }
    throw;
  }
  progress->finish(trace_path);
  dump.write(pipeline.local.named_params, pipeline.local.named_buffers, losses,
             buffers_after_first_step, executor.recv_buffers().allocations());
}

}  // namespace

void train(const baton::Config& loaded, const TrainOptions& options) {
  RankStart start = start_rank(loaded, options);
  const WorldInfo& world = start.world;
  const RunSettings& settings = start.settings;
  const std::string schedule_name = start.plan.plugins.schedule->name();
  const int microbatches = start.plan.configured.shape.microbatches;
  if (!start.store) start.store = meet_the_other_ranks(settings, world);
  FailureRecord failures(start.store.get(), world.rank);
  const FailureRecord::OnUnwind record_set_up_failures(&failures);

  const auto trace =
      std::make_shared<RunTrace>(settings.trace, world.rank, world.world_size, start.store,
                                 settings.timeout, world.pipeline_ranks);
  RankPipelineOptions pipeline_options;
  pipeline_options.data_dir = options.data_dir;
  pipeline_options.resume = options.resume;
  pipeline_options.failures = &failures;
  if (trace->enabled()) pipeline_options.executor.observers.push_back(trace);
  for (const auto& observer : options.step_observers) {
    pipeline_options.executor.observers.push_back(observer);
  }
  InjectedSignal signal_at_step;
  inject_failure_from_environment(world.rank, &pipeline_options.executor.fault, &signal_at_step);
  const std::unique_ptr<RankPipeline> pipeline = build_rank_pipeline(
      std::move(start.plan), world, start.store, settings, std::move(pipeline_options));
  const FailureRecord::OnUnwind record_before_disconnecting(&failures);
  RankRun run{start, *pipeline, *trace, failures, signal_at_step, schedule_name, microbatches};
  run_steps(run, options);
}

}  // namespace baton_app
