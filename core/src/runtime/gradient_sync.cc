#include "baton/runtime/gradient_sync.h"

#include <map>
#include <utility>
#include <vector>

#include "accumulator_hooks.h"
#include "baton/error.h"
#include "baton/plan/gradient_reduction.h"
#include "baton/runtime/step_spans.h"
#include "gradient_norm.h"
#include "gradient_reducer.h"
#include "main_gradients.h"
#include "scaled_gradients.h"
#include "sync_groups.h"
#include "tied_gradients.h"

namespace baton {

struct GradientSync::Parts {
  Parts(const SyncPlace& place, const GradientSyncOptions& options, StepSpans& spans)
      : groups(options.all_reduce, place.device, place.timeout),
        ties(place.topology, place.replica, place.pipeline_rank, groups),
        reducer(place.pipeline_rank, place.topology.replicas, options.bucket_bytes,
                options.reduce_dtype, groups, spans),
        norm(place.topology, place.replica, groups),
        scaled(place.topology, groups),
        main(options.main_gradients) {}

  SyncGroups groups;
  TiedGradients ties;
  GradientReducer reducer;
  GradientNorm norm;
  ScaledGradients scaled;
  MainGradients main;
  AccumulatorHooks hooks;   // every trainable parameter's, while a part listens for them
  int replicas_group = -1;  // this pipeline rank in every replica; -1: no replicas to average
  double loss_scale = 1.0;  // this step's (GradientSyncOptions::loss_scaling)
  // inject_nonfinite(): the stage whose handed-over gradients are overwritten, and with what.
  int poisoned_stage = -1;
  double poison = 0.0;
  // hook_every_gradient: by stage, as named_parameters() lists them (what inject_nonfinite()
  // overwrites); empty otherwise.
  std::map<int, std::vector<at::Tensor>> params;
};

GradientSync::GradientSync(SyncPlace place, GradientSyncOptions options, StepSpans& spans)
    : place_(std::move(place)),
      options_(std::move(options)),
      parts_(std::make_unique<Parts>(place_, options_, spans)) {}

GradientSync::~GradientSync() = default;

void GradientSync::join(const Plan& plan, const std::map<int, std::shared_ptr<Stage>>& stages) {
  Parts& parts = *parts_;
  const GradientHolders holders = parts.main.join(stages);
  parts.ties.join(plan, holders, options_.tied_parameters);
  if (place_.topology.replicas > 1 && reduces_gradients(plan)) {
    parts.replicas_group = parts.groups.join(
        place_.topology.replicas_of(place_.pipeline_rank),
        "the gradients of pipeline rank " + std::to_string(place_.pipeline_rank) + " across " +
            std::to_string(place_.topology.replicas) + " replicas (world.data_parallel)");
    parts.reducer.join(parts.replicas_group, plan, holders, parts.ties.synchronised_names());
  }
  if (parts.reducer.active() || !parts.main.empty() || options_.hook_every_gradient) {
    hook_accumulators(stages);
  }
  if (options_.measure_norm) {
    std::set<std::string> counted_elsewhere = options_.norm_counted_elsewhere;
    counted_elsewhere.insert(parts.ties.counted_elsewhere().begin(),
                             parts.ties.counted_elsewhere().end());
    parts.norm.join(holders, counted_elsewhere);
  }
  if (options_.loss_scaling) parts.scaled.join(holders);
}

// One hook per parameter, so the fold into the float32 master always comes before the
// replicas' bucket reads it. A hook needs a leaf: the one check of it, for both parts.
void GradientSync::hook_accumulators(const std::map<int, std::shared_ptr<Stage>>& stages) {
  // Hooked for an injected fault only: a parameter without an accumulator goes without.
  const bool needed = parts_->reducer.active() || !parts_->main.empty();
  for (const auto& [stage, held] : stages) {
    std::size_t index = 0;
    for (const auto& [name, param] : held->named_parameters()) {
      if (options_.hook_every_gradient) parts_->params[stage].push_back(param);
      if (param.requires_grad() && (needed || param.is_leaf())) {
        if (!param.is_leaf()) {
          const bool replicas = parts_->reducer.active();
          throw Error(std::string(replicas ? "data parallelism: " : "precision.params: ") +
                      "parameter '" + name + "' of stage " + std::to_string(stage) +
                      " is computed from other tensors (not a leaf), so it has no gradient of "
                      "its own to " +
                      (replicas ? "average across the replicas" : "add into its float32 master") +
                      "; register it as a parameter of the module instead");
        }
        parts_->hooks.add(param, [this, s = stage, index] { gradient_final(s, index); });
      }
      ++index;
    }
  }
}

bool GradientSync::averages_replicas() const {
  return parts_->replicas_group >= 0;
}

void GradientSync::begin_step(double loss_scale) {
  parts_->loss_scale = loss_scale;
  parts_->reducer.begin_step();
}

std::int64_t GradientSync::sum_targets(std::int64_t counted) {
  if (!averages_replicas()) return counted;
  try {
    return parts_->groups.sum(parts_->replicas_group, counted);
  } catch (const std::exception& error) {
    throw SyncFailure(
        0, std::string("summing the counted targets across the replicas: ") + error.what());
  }
}

void GradientSync::before_compute(int timestep) {
  parts_->reducer.before_compute(timestep);
}

void GradientSync::after_compute() {
  parts_->poisoned_stage = -1;
  parts_->reducer.after_compute();
}

void GradientSync::inject_nonfinite(int stage, double value) {
  parts_->poisoned_stage = stage;
  parts_->poison = value;
}

void GradientSync::gradient_final(int stage, std::size_t param_index) {
  if (stage == parts_->poisoned_stage) {
    const at::Tensor& param = parts_->params.at(stage).at(param_index);
    if (param.grad().defined()) param.mutable_grad().fill_(parts_->poison);
  }
  parts_->main.fold(stage, param_index);
  parts_->reducer.gradient_final(stage, param_index);
}

void GradientSync::post(int stage, int timestep) {
  parts_->reducer.post(stage, timestep);
}

void GradientSync::poll() {
  parts_->reducer.poll();
}

SyncResult GradientSync::finish(int last_timestep, std::optional<double> loss) {
  Parts& parts = *parts_;
  SyncResult result;
  // Each phase's failure is annotated at the rank's last plan step, but for a bucket's,
  // which names the step that started it.
  const auto phase = [last_timestep](const char* what, const auto& run) {
    try {
      run();
    } catch (const SyncFailure&) {
      throw;
    } catch (const std::exception& error) {
      throw SyncFailure(last_timestep, std::string(what) + ": " + error.what());
    }
  };
  result.exposed_seconds = parts.reducer.finish();
  phase("summing the gradients of tied parameters", [&] { parts.ties.synchronise(); });
  if (options_.loss_scaling) {
    phase("agreeing whether any gradient overflowed (precision.loss_scale)",
          [&] { result.nonfinite = parts.scaled.unscale(parts.loss_scale); });
  }
  // A step every rank skips: its norm would be an inf or a nan, and nothing clips by it.
  if (options_.measure_norm && !result.nonfinite) {
    phase("summing the gradient's norm over the pipeline", [&] {
      result.norm = parts.norm.measure();
      result.has_norm = true;
    });
  }
  if (loss) {
    result.loss = *loss;
    if (averages_replicas()) {
      phase("averaging the loss across the replicas", [&] {
        result.loss = parts.groups.sum(parts.replicas_group, *loss) / place_.topology.replicas;
      });
    }
  }
  return result;
}

void GradientSync::check_tied_copies() {
  parts_->ties.check_copies();
}

}  // namespace baton
