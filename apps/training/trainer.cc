#include "trainer.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

#include <nlohmann/json.hpp>

#include "batch_prefetcher.h"
#include "batches.h"
#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/files.h"
#include "baton/log.h"
#include "baton/plan/compile.h"
#include "baton/plan/format.h"
#include "baton/runtime/executor.h"
#include "baton/runtime/microbatch.h"
#include "baton/runtime/transfer_probe.h"
#include "baton/step_error.h"
#include "baton/store_keys.h"
#include "baton/stores.h"
#include "baton/unit_chain.h"
#include "baton/validator.h"
#include "baton/wait_notice.h"
#include "checkpoint.h"
#include "compute_setup.h"
#include "heartbeat.h"
#include "model_catalog.h"
#include "progress.h"
#include "rank_setup.h"
#include "run_settings.h"
#include "run_trace.h"
#include "stage_cuts.h"
#include "tuning/auto_schedule.h"
#include "step_seed.h"
#include "stopwatch.h"
#include "world_env.h"

namespace baton_app {
namespace {

void write_dump(const std::string& dir, int rank, const c10::Dict<std::string, at::Tensor>& dump) {
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dump));
  baton::write_file_atomically(dir + "/rank" + std::to_string(rank) + ".pt",
                               std::string(bytes.begin(), bytes.end()));
}

// BATON_INJECT_FAILURE="rank=R,step=S,action=A[,by=kill|stop]": make rank R fail when it
// reaches action A in training step S — to see (and test) how a failure is reported and
// stops the run. A is a compute action ("1B0", it raises an error) or a receive ("1RECV_F0",
// it raises when the action that needs it waits for it); by=kill SIGKILLs the rank there
// instead (a crash, not an error), by=stop SIGSTOPs it (a hung rank: alive, silent, holding
// its sockets). action=kill / action=stop do that at the start of step S;
// action=kill_in_checkpoint SIGKILLs the rank while it writes step S's checkpoint.
struct InjectedSignal {
  int step = -1;
  int signal = 0;
  int kill_in_checkpoint_step = -1;
};

void inject_failure_from_environment(int rank, baton::ExecutorOptions* options,
                                     InjectedSignal* signal_at_step) {
  const char* text = std::getenv("BATON_INJECT_FAILURE");
  if (text == nullptr || text[0] == '\0') return;
  const auto refuse = [&](const std::string& why) {
    return baton::ConfigError(std::string("BATON_INJECT_FAILURE='") + text + "': " + why +
                              "; expected rank=R,step=S,action=A[,by=kill|stop] (for example "
                              "rank=1,step=2,action=1B0 or rank=1,step=2,action=1RECV_F1,by=stop)");
  };
  int target_rank = -1, step = -1, consumed = 0;
  char action[64] = {0};
  if (std::sscanf(text, "rank=%d,step=%d,action=%63[^,]%n", &target_rank, &step, action,
                  &consumed) != 3) {
    throw refuse("not of that form");
  }
  int by_signal = 0;
  const std::string rest = text + consumed;
  if (rest == ",by=kill") {
    by_signal = SIGKILL;
  } else if (rest == ",by=stop") {
    by_signal = SIGSTOP;
  } else if (!rest.empty()) {
    throw refuse("'" + rest + "' after the action is not ,by=kill or ,by=stop");
  }
  const std::string name = action;
  const bool whole_step = name == "kill" || name == "stop" || name == "kill_in_checkpoint";
  if (whole_step && by_signal != 0) throw refuse("action=" + name + " takes no by=");
  if (target_rank != rank) return;
  if (name == "kill_in_checkpoint") {
    signal_at_step->kill_in_checkpoint_step = step;
    return;
  }
  if (whole_step) {
    *signal_at_step = {step, name == "kill" ? SIGKILL : SIGSTOP};
    return;
  }
  options->fault = {name, step, by_signal};
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const baton::Config& config,
                                                        const std::vector<at::Tensor>& params) {
  const baton::ParamValues& section = config.section("optimizer");
  const std::string name = section.get_string("name");
  if (name == "sgd") {
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(section.get_float("lr"))
                    .momentum(section.get_float("momentum"))
                    .weight_decay(section.get_float("weight_decay")));
  }
  if (name == "adam") {
    return std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(section.get_float("lr"))
                    .weight_decay(section.get_float("weight_decay")));
  }
  throw baton::ConfigError(section.at("name").origin().description +
                           ": optimizer.name must be sgd or adam, got '" + name + "'");
}

void clear_gradients(const std::vector<at::Tensor>& params) {
  for (const at::Tensor& param : params) {
    if (param.grad().defined()) param.mutable_grad() = at::Tensor();
  }
}

namespace {

// The order in which ranks failed, recorded before this one aborts its transport (which
// makes its peers fail too): the launcher names the rank that failed first, not the first
// to exit.
void record_failure(baton::Store* store, int rank) {
  if (!store) return;
  try {
    const std::int64_t order = store->add(baton::store_keys::kFailureCount, 1);
    const std::string rank_text = std::to_string(rank);
    store->set(baton::store_keys::failure(order),
               std::vector<std::uint8_t>(rank_text.begin(), rank_text.end()));
  } catch (const std::exception&) {
    // The store may be gone with the launcher; the error itself still tells the story.
  }
}

// Records this rank's failure once: explicitly before it aborts its transport, or, for a
// failure during set-up (a missing checkpoint file, a damaged data file, a model that does
// not build), when the exception leaves train(), so that set-up failures are ordered too.
class FailureRecord {
 public:
  FailureRecord(baton::Store* store, int rank) : store_(store), rank_(rank) {}
  FailureRecord(const FailureRecord&) = delete;
  FailureRecord& operator=(const FailureRecord&) = delete;

  void record() {
    if (recorded_) return;
    recorded_ = true;
    record_failure(store_, rank_);
  }

  // Records the failure if an exception unwinds past it. One right after the store covers
  // set-up; one declared after the transport records before the transport's connections
  // close (which makes the peers fail, and record, too).
  class OnUnwind {
   public:
    explicit OnUnwind(FailureRecord& record)
        : record_(record), exceptions_(std::uncaught_exceptions()) {}
    ~OnUnwind() {
      if (std::uncaught_exceptions() > exceptions_) record_.record();
    }
    OnUnwind(const OnUnwind&) = delete;
    OnUnwind& operator=(const OnUnwind&) = delete;

   private:
    FailureRecord& record_;
    int exceptions_;
  };

 private:
  baton::Store* store_;
  int rank_;
  bool recorded_ = false;
};

// The ranks this rank exchanges tensors with: those holding the stage before or after one
// of its own in its pipeline, and its replicas in the others (they reduce gradients together).
std::vector<int> pipeline_neighbours(const baton::Plan& plan, const WorldInfo& world) {
  const int rank = world.pipeline_rank;
  std::vector<int> neighbours;
  for (int replica = 0; replica < world.replicas; ++replica) {
    if (replica != world.replica) neighbours.push_back(replica * world.pipeline_ranks + rank);
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

// What an equivalence test compares with plain PyTorch (TrainOptions::dump_dir): the
// parameters a run starts from, the gradients of its first step, its losses, its final
// parameters and the receive-buffer allocations. Does nothing without a dump folder.
class EquivalenceDump {
 public:
  EquivalenceDump(std::string dir, int rank) : dir_(std::move(dir)), rank_(rank) {}

  void record_initial(const std::vector<std::pair<std::string, at::Tensor>>& named) {
    if (dir_.empty()) return;
    for (const auto& [name, param] : named) dump_.insert("initial." + name, param.detach().clone());
  }
  void record_gradients(const std::vector<std::pair<std::string, at::Tensor>>& named) {
    if (dir_.empty()) return;
    for (const auto& [name, param] : named) {
      if (param.grad().defined()) dump_.insert("grad." + name, param.grad().clone());
    }
  }
  void write(const std::vector<std::pair<std::string, at::Tensor>>& named,
             const std::vector<double>& losses, std::int64_t buffers_after_first_step,
             std::int64_t buffers_at_end) {
    if (dir_.empty()) return;
    for (const auto& [name, param] : named) dump_.insert("param." + name, param.detach().clone());
    if (!losses.empty()) dump_.insert("loss", at::tensor(losses, at::kDouble));
    // Receive buffers are allocated once, at setup: the count must not move after step 1.
    dump_.insert("recv_buffer_allocations",
                 at::tensor({buffers_after_first_step, buffers_at_end}, at::kLong));
    write_dump(dir_, rank_, dump_);
  }

 private:
  std::string dir_;
  int rank_;
  c10::Dict<std::string, at::Tensor> dump_;
};

// One stage-boundary message (stage 0's output, which stage 1 on rank 1 receives), timed
// as a ping-pong between ranks 0 and 1 (TrainOptions::on_transfer_probe).
void probe_transfer(const TrainOptions& options, baton::Transport* transport,
                    const baton::PipelineExecutor& executor, const baton::Plan& plan, int rank,
                    std::chrono::milliseconds timeout) {
  if (!options.on_transfer_probe || !transport || rank > 1 || plan.stage_to_rank.at(1) != 1) {
    return;
  }
  std::int64_t bytes = 0;
  for (const auto& meta : rank == 0 ? executor.output_metas(0) : executor.input_metas(1)) {
    std::int64_t elements = 1;
    for (const std::int64_t size : meta.shape) elements *= size;
    bytes += elements * static_cast<std::int64_t>(c10::elementSize(meta.dtype));
  }
  const double seconds =
      baton::probe_one_way_seconds(*transport, 1 - rank, rank == 0, bytes, 50, timeout);
  if (rank == 0) options.on_transfer_probe(bytes, seconds);
}

// Printed once by rank 0 when there are replicas: who is who.
std::string describe_layout(const WorldInfo& world) {
  std::string text = "layout: " + std::to_string(world.replicas) + " replicas x " +
                     std::to_string(world.pipeline_ranks) + " pipeline ranks (rank = replica x " +
                     std::to_string(world.pipeline_ranks) + " + pipeline rank):";
  for (int replica = 0; replica < world.replicas; ++replica) {
    text += " replica " + std::to_string(replica) + " = ranks " +
            std::to_string(replica * world.pipeline_ranks) + ".." +
            std::to_string((replica + 1) * world.pipeline_ranks - 1) +
            (replica + 1 < world.replicas ? ";" : "");
  }
  return text;
}

}  // namespace

void train(baton::Config& config, const TrainOptions& options) {
  const WorldInfo world = with_data_parallel(
      world_from_environment(), static_cast<int>(config.section("world").get_int("data_parallel")));
  set_up_logging(config, world);
  check_world_size(config, world);
  if (world.rank == 0 && world.replicas > 1) std::cout << describe_layout(world) << std::endl;
  const RunSettings settings = read_run_settings(config);
  // Before any tensor work: LibTorch's pools are sized once.
  const ComputeSetup compute = set_up_compute(config, world);
  if (world.rank == 0) {
    std::cout << "compute: " << compute.describe() << std::endl;
    if (compute.blas.reference) std::cerr << "warning: " << compute.blas.advice << std::endl;
  }
  const baton::PluginLoader loader = baton::plugin_loader_for(config);
  // schedule.name: auto: the ranks meet first, so that rank 0 can measure the model and
  // every rank run what it chose (docs/auto.md).
  std::shared_ptr<baton::Store> store;
  std::string schedule_choice;  // schedule: auto's, recorded in every checkpoint's manifest
  if (config.section("schedule").get_string("name") == "auto") {
    store = meet_the_other_ranks(config, world, settings);
    AutoScheduleContext context;
    context.rank = world.rank;
    context.ranks = world.world_size;
    context.store = store;
    context.timeout = settings.timeout;
    context.run_dir = settings.run_dir;
    // Rank 0 chooses; on --resume it keeps the choice the newest checkpoint recorded.
    if (options.resume && world.rank == 0 && !settings.checkpoint.dir.empty()) {
      const std::string checkpoint = latest_checkpoint(settings.checkpoint.dir);
      if (!checkpoint.empty()) {
        context.recorded_choice = schedule_choice_in(checkpoint);
        context.recorded_choice_in = checkpoint + "/manifest.json";
      }
    }
    context.data_dir = options.data_dir;
    context.resume = options.resume;
    schedule_choice = resolve_auto_schedule(config, context);
  }
  const baton::ConfiguredPlugins plugins = baton::resolve_plugins(config, loader);
  // The plan, checked before anything else happens.
  const baton::ConfiguredPlan configured =
      baton::compile_configured_plan(config, plugins, world.world_size);
  const baton::Plan& plan = configured.plan.lowered;

  if (!store) store = meet_the_other_ranks(config, world, settings);
  FailureRecord failure_record(store.get(), world.rank);
  const FailureRecord::OnUnwind record_set_up_failures(failure_record);
  // The model, identical on every rank, cut into stages; this rank keeps its own.
  baton_models::BuiltModel model =
      baton_models::build_model(baton_models::read_model_settings(config), settings.seed);
  const auto batches = baton_models::make_batch_source(baton_models::read_data_settings(config),
                                                       model, options.data_dir);
  const std::vector<at::Tensor> global_first_inputs = batches->batch(1).inputs;
  const std::vector<at::Tensor> first_inputs = replica_slice(global_first_inputs, world);
  const LocalStages local = cut_into_stages(config, model, configured, world, store, settings,
                                            first_inputs, options.resume);
  const std::shared_ptr<baton::Transport> transport =
      connect_transport(config, plugins, world, store, settings.timeout);
  const FailureRecord::OnUnwind record_before_disconnecting(failure_record);

  baton::ExecutorOptions executor_options;
  executor_options.timeout = settings.timeout;
  const auto trace = std::make_shared<RunTrace>(settings.trace, world.rank, world.world_size, store,
                                                settings.timeout, world.pipeline_ranks);
  if (trace->enabled()) executor_options.observers.push_back(trace);
  for (const auto& observer : options.step_observers)
    executor_options.observers.push_back(observer);
  executor_options.replica = world.replica;
  executor_options.replicas = world.replicas;
  InjectedSignal signal_at_step;
  inject_failure_from_environment(world.rank, &executor_options, &signal_at_step);
  baton::PipelineExecutor executor(world.pipeline_rank, plan, local.stages, transport,
                                   make_validators(config, loader), model.loss, executor_options);
  auto optimizer = make_optimizer(config, local.params);
  for (auto& stage : local.stages) stage->set_training(true);

  CheckpointSettings checkpoint_settings = settings.checkpoint;
  checkpoint_settings.kill_while_writing_step = signal_at_step.kill_in_checkpoint_step;
  checkpoint_settings.schedule_choice = schedule_choice;
  // Replica 0 writes the checkpoints (the replicas hold the same parameters); every replica
  // reads its pipeline rank's files.
  checkpoint_settings.writes = world.replica == 0;
  checkpoint_settings.data_parallel = world.replicas;
  Checkpointer checkpointer(checkpoint_settings, world.pipeline_rank, world.pipeline_ranks, store,
                            settings.timeout, local.named_params, optimizer.get());
  int first_step = 1;
  if (options.resume) {
    const Checkpointer::Restored restored = checkpointer.restore_latest();
    first_step = restored.step + 1;
    if (world.rank == 0) {
      std::cout << "resuming after step " << restored.step << " from " << restored.folder
                << std::endl;
    }
  }
  nlohmann::ordered_json header = {{"run", settings.name},
                                   {"ranks", world.world_size},
                                   {"data_parallel", world.replicas},
                                   {"schedule", plugins.schedule->name()},
                                   {"microbatches", configured.shape.microbatches},
                                   {"cuts", format_cuts(local.bounds)}};
  compute.add_json_fields(header);
  Progress progress(settings.progress, world, store, settings.steps, plan, header.dump());
  progress.resume_after(first_step - 1);
  std::string trace_path;
  EquivalenceDump dump(options.dump_dir, world.rank);
  // The parameters the first step starts from, so that a reference outside baton can start
  // from the same point (tests/pipeline/torch_reference.py).
  dump.record_initial(local.named_params);
  std::vector<double> losses;
  std::int64_t buffers_after_first_step = 0;
  // A rank keeps only the part of each batch its stages use: inputs for the first stage,
  // targets for the last.
  baton_models::BatchPrefetcher prefetcher(*batches,
                                           plan.stage_to_rank.front() == world.pipeline_rank,
                                           plan.stage_to_rank.back() == world.pipeline_rank);
  const std::int64_t samples_per_step = global_first_inputs.at(0).size(0);
  // Integer inputs are token ids: a language model's throughput is tokens/s.
  const std::int64_t tokens_per_step = at::isFloatingType(global_first_inputs.at(0).scalar_type())
                                           ? 0
                                           : global_first_inputs.at(0).numel();
  // A neighbour that hangs stops the run at the heartbeat period, naming it, instead of at
  // world.timeout_s: aborting the transport fails this rank's pending transfers at once.
  auto heartbeat =
      std::make_unique<Heartbeat>(store, world.rank, pipeline_neighbours(plan, world),
                                  settings.heartbeat, [transport](const std::string& why) {
                                    if (transport) transport->abort(why);
                                  });
  try {
    executor.setup(first_inputs);
    if (model.verify) {
      // After setup, so that stages that do not fit together fail there, on both sides,
      // naming both; this catches a model whose forward is more than its children.
      std::vector<at::Tensor> sample;
      for (const auto& input : first_inputs) sample.push_back(input.slice(0, 0, 1));
      model.verify(sample);
    }
    for (int step = first_step; step <= settings.steps; ++step) {
      if (step == signal_at_step.step) std::raise(signal_at_step.signal);
      // Randomness inside the model (dropout) depends on the step alone, so a resumed run
      // reproduces an uninterrupted one exactly.
      torch::manual_seed(baton_models::step_seed(settings.seed, step));
      const auto started = std::chrono::steady_clock::now();
      const baton_models::Batch batch = prefetcher.take(step);
      clear_gradients(local.params);
      trace->begin_step(step);
      const baton::StepResult result = executor.run_step(replica_slice(batch.inputs, world),
                                                         replica_slice(batch.targets, world));
      if (step == 1) {
        buffers_after_first_step = executor.recv_buffers().allocations();
        dump.record_gradients(local.named_params);
      }
      optimizer->step();
      if (result.has_loss) losses.push_back(result.loss);
      const double seconds = seconds_since(started);
      progress.step_done(step, result, seconds, samples_per_step, tokens_per_step);
      if (options.on_step) {
        options.on_step(step, std::chrono::duration<double>(started.time_since_epoch()).count(),
                        seconds, result);
      }
      if (checkpointer.due(step, settings.steps)) {
        const std::string written = checkpointer.save(step, plugins.schedule->name());
        if (world.rank == 0)
          BATON_LOG_INFO("checkpoint", "step " << step << " written to " << written);
      }
    }
    heartbeat.reset();  // done training: a neighbour that finishes later must not think it hung
    // Ranks 0 and 1 are pipeline ranks 0 and 1 of replica 0 whatever the replicas.
    probe_transfer(options, transport.get(), executor, plan, world.rank, settings.timeout);
    trace_path = trace->finish(plan);
  } catch (const baton::Error& error) {
    failure_record.record();
    // Peers blocked on this rank fail fast instead of waiting for their timeout.
    if (transport) {
      transport->abort("rank " + std::to_string(world.rank) + " failed: " + error.what());
    }
    throw;
  }
  progress.finish(trace_path);
  dump.write(local.named_params, losses, buffers_after_first_step,
             executor.recv_buffers().allocations());
}

}  // namespace baton_app
