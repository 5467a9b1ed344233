#include "unpipelined.h"

#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

#include "batches.h"
#include "baton/config.h"
#include "baton/error.h"
#include "baton/files.h"
#include "baton/runtime/autocast_scope.h"
#include "baton/runtime/microbatch.h"
#include "baton/unit_chain.h"
#include "command_line.h"
#include "model_catalog.h"
#include "model_specs.h"
#include "step_seed.h"
#include "stopwatch.h"
#include "training/gradient_clipping.h"
#include "training/low_precision_stage.h"
#include "training/master_weights.h"
#include "training/optimizer_factory.h"
#include "training/precision_dtypes.h"
#include "training/rank_compute.h"
#include "training/rank_pipeline.h"

#ifndef BATON_DATA_DIR
#define BATON_DATA_DIR "configs/data"
#endif

namespace baton_app {

const char* const kUnpipelinedRankCommand = "unpipelined-rank";

namespace {

struct UnpipelinedOptions {
  std::string config;
  std::vector<std::string> sets;
  int steps = 0, warmup = 0, local_ranks = 1;
  std::string out;
};

int run_unpipelined_rank(const UnpipelinedOptions& options) {
  baton::ConfigOverrides overrides;
  overrides.set = options.sets;
  overrides.use_environment = false;
  baton::Config config = options.config.empty()
                             ? baton::load_config_text("", "<embedded default>", overrides)
                             : baton::load_config_file(options.config, overrides);
  // This rank's front door: it trains the model alone, without plugins.
  config = baton_models::with_model_params(std::move(config));
  const int steps = options.steps;
  const int warmup = options.warmup;
  WorldInfo world;
  world.local_world_size = options.local_ranks;
  set_up_compute(read_world_settings(config), world);

  const auto seed = static_cast<std::uint64_t>(config.section("run").get_int("seed"));
  baton_models::BuiltModel model =
      baton_models::build_model(baton_models::read_model_settings(config), seed);
  const auto batches = baton_models::make_batch_source(baton_models::read_data_settings(config),
                                                       model, BATON_DATA_DIR);
  const int microbatches = static_cast<int>(config.section("schedule").get_int("microbatches"));
  LocalStages whole;  // the whole model's parameters, each tensor once
  std::set<const void*> seen;
  for (int unit = 0; unit < model.chain->num_units(); ++unit) {
    for (const auto& named : model.chain->unit_parameters(unit)) {
      if (seen.insert(named.second.unsafeGetTensorImpl()).second) {
        whole.named_params.push_back(named);
        whole.params.push_back(named.second);
      }
    }
  }
  const OptimizerSettings recipe = read_optimizer_settings(config);
  const PrecisionSettings precision = read_precision_settings(config);
  // precision.params: bf16 as Megatron's loop: a bf16 model, float32 masters and main_grad.
  std::unique_ptr<MasterWeights> masters;
  std::optional<c10::ScalarType> compute_dtype;
  if (precision.params.value == ParamPrecision::kBf16) {
    masters = std::make_unique<MasterWeights>(whole, c10::kBFloat16);
  } else {
    compute_dtype = autocast_dtype(precision.compute.value);
  }
  const std::vector<at::Tensor>& params = whole.params;
  auto optimizer = make_optimizer(recipe, params);
  model.chain->set_training(true);

  std::vector<double> measured;
  for (int step = 1; step <= warmup + steps; ++step) {
    torch::manual_seed(baton_models::step_seed(seed, step));
    const auto started = std::chrono::steady_clock::now();
    const baton_models::Batch batch = batches->batch(step);
    clear_gradients(params);
    const auto inputs = baton::split_microbatches(batch.inputs, microbatches, 0);
    const auto targets = baton::split_microbatches({batch.targets}, microbatches, 0);
    // The loss as the pipeline's last stage forms it: a built-in loss's sums over the whole
    // batch's counted targets, a scripted loss's microbatch means averaged.
    double divisor = microbatches;
    if (model.count_targets) {
      std::int64_t counted = 0;
      for (int mb = 0; mb < microbatches; ++mb) counted += model.count_targets(targets[mb][0]);
      divisor = static_cast<double>(std::max<std::int64_t>(counted, 1));
    }
    double loss_sum = 0;
    for (int mb = 0; mb < microbatches; ++mb) {
      at::Tensor loss;
      {
        // precision.compute as a PyTorch loop writes it: each microbatch's forward and loss
        // inside its own torch.autocast.
        const baton::AutocastScope autocast(c10::kCPU, compute_dtype);
        auto outputs = baton::run_whole_chain(
            *model.chain,
            masters ? cast_tensors(inputs[mb], at::kFloat, c10::kBFloat16) : inputs[mb]);
        if (masters) outputs = cast_tensors(outputs, c10::kBFloat16, at::kFloat);
        loss = model.loss(outputs, targets[mb][0]);
      }
      loss_sum += loss.item<double>();
      (loss / divisor).backward();
      if (masters) masters->fold_gradients();
    }
    // The recipe's work too, as the pipelined step does it: the norm, clipping, the rate.
    if (recipe.clip_grad_norm > 0) {
      clip_gradients(params, gradient_norm(params), recipe.clip_grad_norm, step);
    }
    set_learning_rate(*optimizer, recipe.schedule.lr_at(step, recipe.lr, warmup + steps));
    optimizer->step();
    if (masters) masters->after_step();
    if (step > warmup) {
      measured.push_back(seconds_since(started));
    }
    if (!std::isfinite(loss_sum)) throw baton::Error("unpipelined reference: loss is not finite");
  }
  std::ostringstream out;
  out << "step_seconds";
  char number[32];
  for (double seconds : measured) {
    std::snprintf(number, sizeof(number), " %.9f", seconds);
    out << number;
  }
  out << "\n";
  baton::write_file_atomically(options.out, out.str());
  return 0;
}

}  // namespace

void add_unpipelined_rank_command(CommandLine& command_line) {
  auto options = std::make_shared<UnpipelinedOptions>();
  CLI::App& command = command_line.add_command(
      command_line.root(), kUnpipelinedRankCommand,
      "started by `baton bench pipeline`, not by hand: the unpipelined reference",
      [options] { return run_unpipelined_rank(*options); });
  command.group("");  // internal
  command.add_option("CONFIG", options->config);
  add_repeatable_option(command, "--set", options->sets, "");
  command.add_option("--steps", options->steps)->required()->check(integer_in(1, 1000000));
  command.add_option("--warmup", options->warmup)->required()->check(integer_in(0, 1000000));
  command.add_option("--local-ranks", options->local_ranks)->check(integer_in(1, 4096));
  command.add_option("--out", options->out)->required();
}

std::vector<double> read_unpipelined_steps(const std::string& path) {
  std::istringstream file(
      baton::read_file(path, "bench pipeline: the unpipelined reference's figures"));
  std::string word;
  if (!(file >> word) || word != "step_seconds") {
    throw baton::Error("bench pipeline: the unpipelined reference wrote no figures to '" + path +
                       "'");
  }
  std::vector<double> steps;
  for (double seconds; file >> seconds;) steps.push_back(seconds);
  return steps;
}

}  // namespace baton_app
