#include "rank_pipeline.h"

#include <ATen/Parallel.h>
#include <torch/optim/optimizer.h>

#include <utility>

#include "baton/error.h"
#include "baton/log.h"
#include "baton/plan/compile.h"
#include "baton/runtime/compute_environment.h"
#include "baton/validator.h"
#include "losses.h"
#include "low_precision_stage.h"
#include "master_weights.h"
#include "model_catalog.h"
#include "optimizer_factory.h"
#include "precision_dtypes.h"
#include "rank_device.h"
#include "recompute_setting.h"

namespace baton_app {

std::vector<std::shared_ptr<baton::Validator>> make_validators(
    const baton::Setting<std::vector<std::string>>& names, const baton::PluginLoader& loader) {
  std::vector<std::shared_ptr<baton::Validator>> chain;
  for (const auto& name : names.value) {
    if (name == "off") continue;
    if (auto builtin = baton::make_builtin_validator(name)) {
      chain.push_back(std::move(builtin));
      continue;
    }
    std::shared_ptr<baton::LoadedPlugin> plugin;
    try {
      plugin = loader.load(baton::PluginKind::kValidator, name);
    } catch (const baton::PluginError& error) {
      throw baton::ConfigError(names.where() + ": validation.validators: '" + name +
                               "' is neither built in (shape_dtype, strict, finite, off) nor a "
                               "validator plugin: " +
                               error.what());
    }
    chain.push_back(plugin->create_as<baton::Validator>(baton::ParamValues()));
  }
  return chain;
}

RankPlan plan_rank(const baton::Config& config, baton::ConfiguredPlugins plugins,
                   const WorldInfo& world) {
  RankPlan plan{baton::plugin_loader_for(config), std::move(plugins), {}};
  plan.configured = baton::compile_configured_plan(config, plan.plugins, world.world_size);
  // Which plugin files run, said once: a schedule or transport selected by path, or found on
  // BATON_PLUGIN_PATH, is visible in the log.
  if (world.rank == 0) {
    const baton::ScheduleShape& shape = plan.configured.shape;
    BATON_LOG_INFO("plan", "schedule " << plan.plugins.schedule->name() << " ("
                                       << plan.plugins.schedule->path() << "): " << shape.ranks
                                       << " ranks x " << shape.stages_per_rank
                                       << (shape.stages_per_rank == 1 ? " stage" : " stages")
                                       << " per rank, " << shape.microbatches
                                       << " microbatches; transport "
                                       << plan.plugins.transport->name() << " ("
                                       << plan.plugins.transport->path() << ")");
  }
  return plan;
}

RankPipeline::~RankPipeline() = default;

void clear_gradients(const std::vector<at::Tensor>& params) {
  for (const at::Tensor& param : params) {
    if (param.grad().defined()) param.mutable_grad() = at::Tensor();
  }
}

// data.prefetch: auto makes microbatches ahead on a background thread only where that thread
// has a CPU of its own; where every CPU computes for a rank it would take its time from them.
bool prefetches_data(const baton_models::DataSettings& data, const WorldInfo& world) {
  if (data.prefetch.value != baton_models::Prefetch::kWhereACpuIsFree) {
    return data.prefetch.value == baton_models::Prefetch::kAlways;
  }
  return baton::cpus_available() > world.local_world_size * at::get_num_threads();
}

void set_rank_executor_options(baton::ExecutorOptions& options, const RankPipeline& pipeline,
                               const WorldInfo& world, std::chrono::milliseconds timeout) {
  options.timeout = timeout;
  options.device = pipeline.device;
  options.autocast = pipeline.autocast;
  options.wire = pipeline.wire;
  options.replica = world.replica;
  options.replicas = world.replicas;
  options.stage_names = pipeline.local.stage_names;
  options.receives_match_by_tag = pipeline.transport_interfaces.receives_match_by_tag;
  options.gradients.all_reduce = pipeline.transport_interfaces.all_reduce;
  options.count_targets = pipeline.model.count_targets;
}

std::unique_ptr<RankPipeline> build_rank_pipeline(RankPlan plan, const WorldInfo& world,
                                                  const std::shared_ptr<baton::Store>& store,
                                                  const RunSettings& settings,
                                                  RankPipelineOptions options) {
  auto pipeline = std::make_unique<RankPipeline>();
  pipeline->plan = std::move(plan);
  // The model, identical on every rank, cut into stages; this rank keeps its own.
  pipeline->model = baton_models::build_model(settings.model, settings.seed);
  const baton_models::DataSettings& data = settings.data;
  pipeline->batches =
      baton_models::make_batch_source(data, pipeline->model, options.data_dir,
                                      baton_models::ReplicaRows{world.replica, world.replicas});
  pipeline->prefetch_data = prefetches_data(data, world);
  pipeline->first_microbatch = pipeline->batches->rows(
      1, 0, pipeline->batches->rows_per_step() / pipeline->plan.configured.shape.microbatches);
  baton_models::check_loss_has_gradient(pipeline->model, pipeline->first_microbatch.targets,
                                        settings.model.loss);
  pipeline->local = cut_into_stages(pipeline->model, pipeline->plan.configured, world, store,
                                    settings, pipeline->first_microbatch.inputs, options.resume);
  pipeline->device = rank_device(settings.world, world);
  place_on_device(*pipeline->model.chain, pipeline->local, pipeline->device);
  ConnectedTransport connected =
      options.shared_transport.transport
          ? options.shared_transport
          : connect_transport(settings.connections, pipeline->plan.plugins, world, store,
                              settings.timeout, pipeline->device);
  pipeline->transport = std::move(connected.transport);
  pipeline->transport_interfaces = connected.interfaces;
  // From here a failure is recorded before the transport's connections close.
  const FailureRecord::OnUnwind record_before_disconnecting(options.failures);
  baton::ExecutorOptions executor_options = std::move(options.executor);
  if (settings.precision.params.value == ParamPrecision::kBf16) {
    // Megatron's --bf16: the stages hold and compute in bf16 themselves, so no autocast.
    pipeline->masters = std::make_unique<MasterWeights>(pipeline->local, c10::kBFloat16);
    const int last_stage = pipeline->plan.configured.shape.num_stages() - 1;
    for (auto& stage : pipeline->local.stages) {
      const bool last = stage->index() == last_stage;
      stage = std::make_shared<LowPrecisionStage>(std::move(stage), c10::kBFloat16, last);
    }
    executor_options.gradients.main_gradients = pipeline->masters->pairs();
    if (world.rank == 0) {
      BATON_LOG_INFO("model",
                     "precision.params: bf16: the stages hold their parameters in "
                     "bf16; the optimizer steps float32 masters, each microbatch's "
                     "gradient added into a float32 one");
    }
  } else {
    pipeline->autocast = autocast_dtype(settings.precision.compute.value);
  }
  pipeline->wire = wire_dtype(settings.precision.wire.value);
  set_rank_executor_options(executor_options, *pipeline, world, settings.timeout);
  executor_options.gradients.reduce_dtype = reduce_dtype(settings.precision.reduce.value);
  executor_options.gradients.bucket_bytes = settings.world.bucket_bytes;
  pipeline->optimizer_settings = settings.optimizer;
  executor_options.gradients.measure_norm = pipeline->optimizer_settings.clip_grad_norm > 0;
  executor_options.gradients.loss_scaling = settings.precision.loss_scale.enabled;
  executor_options.gradients.tied_parameters = pipeline->local.ties;
  executor_options.recompute_stages = settings.stages.recompute.value;
  pipeline->recompute_stages = executor_options.recompute_stages;
  if (world.rank == 0 && !executor_options.recompute_stages.empty()) {
    std::string stages;
    for (const int s : executor_options.recompute_stages) stages += " " + std::to_string(s);
    BATON_LOG_INFO("model", "recompute: stages" << stages
                                                << " keep only their inputs between a "
                                                   "microbatch's forward and backward, and run "
                                                   "the forward again before the backward");
  }
  if (world.rank == 0) {
    for (const baton::TiedParameter& tie : pipeline->local.ties) {
      std::string text;
      for (std::size_t i = 0; i < tie.names.size(); ++i) {
        text += (i ? " = " : "") + tie.names[i] + " (stage " + std::to_string(tie.stages[i]) + ")";
      }
      BATON_LOG_INFO("model", "tied: " << text
                                       << "; each holder keeps a copy, their gradients summed "
                                          "every step");
    }
  }
  pipeline->executor = std::make_unique<baton::PipelineExecutor>(
      world.pipeline_rank, pipeline->plan.plan(), pipeline->local.stages, pipeline->transport,
      make_validators(settings.stages.validators, pipeline->plan.loader), pipeline->model.loss,
      executor_options);
  pipeline->optimizer = make_optimizer(pipeline->optimizer_settings, pipeline->local.params);
  for (auto& stage : pipeline->local.stages) stage->set_training(true);
  return pipeline;
}

}  // namespace baton_app
