#include "model_profiler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/runtime/compute_environment.h"
#include "baton/runtime/microbatch.h"
#include "baton/runtime/split_backward.h"
#include "heap_in_use.h"
#include "median.h"
#include "models/batches.h"
#include "models/model_catalog.h"
#include "owned_outputs.h"
#include "stopwatch.h"
#include "transfer_profiler.h"
#include "unit_precision.h"

namespace baton_app {
namespace {

double bytes_of(const std::vector<at::Tensor>& tensors) {
  double bytes = 0;
  for (const at::Tensor& tensor : tensors) bytes += static_cast<double>(tensor.nbytes());
  return bytes;
}

// The unit's inputs as a pipeline stage sees them: detached, needing a gradient when they
// are floating point and not the model's own input.
std::vector<at::Tensor> stage_inputs(const std::vector<at::Tensor>& values, bool needs_grad) {
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& value : values) {
    at::Tensor input = value.detach();
    if (needs_grad && at::isFloatingType(input.scalar_type())) input.requires_grad_(true);
    inputs.push_back(input);
  }
  return inputs;
}

// The outputs that need a gradient and a gradient of ones for each, to start a backward
// as a loss would.
struct BackwardRoots {
  std::vector<at::Tensor> roots, grads;
};

BackwardRoots ones_for(const std::vector<at::Tensor>& outputs) {
  BackwardRoots start;
  for (const at::Tensor& output : outputs) {
    if (output.requires_grad()) {
      start.roots.push_back(output);
      start.grads.push_back(at::ones_like(output));
    }
  }
  return start;
}

// What SplitBackward::backward_input takes for `outputs`: a gradient of ones for each output
// that needs one, undefined for the others; empty when none does (nothing to run).
std::vector<at::Tensor> split_grads_for(const std::vector<at::Tensor>& outputs) {
  std::vector<at::Tensor> grads;
  bool any = false;
  for (const at::Tensor& output : outputs) {
    any = any || output.requires_grad();
    grads.push_back(output.requires_grad() ? at::ones_like(output) : at::Tensor());
  }
  if (!any) grads.clear();
  return grads;
}

// Drops the gradients the passes accumulated into `chain`'s parameters.
void drop_gradients(baton::UnitChain& chain) {
  for (int unit = 0; unit < chain.num_units(); ++unit) {
    for (auto& named : chain.unit_parameters(unit)) {
      if (named.second.grad().defined()) named.second.mutable_grad() = at::Tensor();
    }
  }
}

// The other ranks of this machine compute while a rank does, sharing its caches and memory
// bandwidth: on 2 cores here a Linear(1024, 1024) unit's actions took 1.5 to 1.9 times as
// long in a pipeline of two ranks as when timed alone. Companion threads keep as many other
// cores busy with the same model (a copy of their own), forward and backward of all its units
// at the microbatch size being timed, so that the profile times each unit in company.
class CompanionLoad {
 public:
  CompanionLoad(const baton_models::ModelSettings& model, const UnitPrecision& precision,
                int companions)
      : precision_(precision) {
    for (int i = 0; i < companions; ++i) {
      models_.push_back(
          std::make_unique<baton_models::BuiltModel>(baton_models::build_model(model, /*seed=*/1)));
      models_.back()->chain->set_training(true);
      precision.cast_chain(*models_.back()->chain);
    }
  }
  CompanionLoad(const CompanionLoad&) = delete;
  CompanionLoad& operator=(const CompanionLoad&) = delete;
  ~CompanionLoad() { stop(); }

  // Starts the companions on `inputs` (one microbatch), after stopping those running.
  void start(const std::vector<at::Tensor>& inputs) {
    stop();
    stopping_ = false;
    // With a rank's threads: on OpenMP's default a companion crowded the timed unit more than
    // a rank does (profile format 7).
    for (auto& model : models_) {
      baton::UnitChain* chain = model->chain.get();
      threads_.push_back(
          baton::start_rank_thread([this, chain, inputs] { keep_computing(*chain, inputs); }));
    }
  }

  void stop() {
    stopping_ = true;
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  // A model that fails here fails in the profile's own passes too, which say why; this load
  // just stops.
  void keep_computing(baton::UnitChain& chain, const std::vector<at::Tensor>& inputs) {
    try {
      compute_until_stopped(chain, inputs);
    } catch (const std::exception&) {
    }
  }

  void compute_until_stopped(baton::UnitChain& chain, const std::vector<at::Tensor>& inputs) {
    while (!stopping_) {
      std::vector<at::Tensor> values = stage_inputs(inputs, false);
      for (int unit = 0; unit < chain.num_units() && !stopping_; ++unit) {
        values = precision_.run_unit(chain, unit, values);
      }
      const BackwardRoots start = ones_for(values);
      if (!start.roots.empty() && !stopping_) torch::autograd::backward(start.roots, start.grads);
      drop_gradients(chain);
    }
  }

  const UnitPrecision& precision_;
  std::vector<std::unique_ptr<baton_models::BuiltModel>> models_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{true};
};

struct Samples {
  std::vector<double> forward, backward, input_grad, weight_grad, saved;
};

// One microbatch size's measurements as the passes collect them.
struct SizeSamples {
  std::vector<at::Tensor> inputs;  // one microbatch
  MicrobatchProfile measured;
  std::vector<Samples> samples;  // per unit
};

SizeSamples start_size(const baton::UnitChain& chain, std::vector<at::Tensor> inputs) {
  SizeSamples size;
  size.measured.microbatch_size = static_cast<int>(inputs.front().size(0));
  size.measured.input_bytes = bytes_of(inputs);
  size.measured.units.resize(static_cast<std::size_t>(chain.num_units()));
  size.samples.resize(static_cast<std::size_t>(chain.num_units()));
  size.inputs = std::move(inputs);
  return size;
}

// Units [first, last) of `chain` one after the other on `values`.
std::vector<at::Tensor> run_units(baton::UnitChain& chain, const UnitPrecision& precision,
                                  int first, int last, std::vector<at::Tensor> values) {
  for (int unit = first; unit < last; ++unit) values = precision.run_unit(chain, unit, values);
  return values;
}

// An untimed forward of every unit once the companions run, before the timed ones: without it
// the pass's first unit measures the caches and thread pool settling after the companions
// started, dearer than the same work further on and than a running first stage.
void settle(baton::UnitChain& chain, const UnitPrecision& precision,
            const std::vector<at::Tensor>& inputs) {
  at::NoGradGuard no_grad;
  run_units(chain, precision, 0, chain.num_units(), inputs);
}

// One pass over every unit at one microbatch size. Pass 0 warms the allocator and the thread
// pool up, pass 1 measures the bytes each unit keeps (alone: the companions allocate too),
// later passes are timed, in company.
void profile_pass(baton::UnitChain& chain, const UnitPrecision& precision, SizeSamples& size,
                  int pass, CompanionLoad& companions) {
  if (pass >= 2) {
    companions.start(size.inputs);
    settle(chain, precision, size.inputs);
  }
  std::vector<at::Tensor> values = size.inputs;
  for (int unit = 0; unit < chain.num_units(); ++unit) {
    UnitProfile& profile = size.measured.units[static_cast<std::size_t>(unit)];
    Samples& times = size.samples[static_cast<std::size_t>(unit)];
    std::vector<at::Tensor> params;
    for (auto& named : chain.unit_parameters(unit)) params.push_back(named.second);

    // Forward, twice: once for the full backward, once for the split one (I, then W).
    const std::vector<at::Tensor> unit_inputs = stage_inputs(values, unit > 0);
    const double heap_before = static_cast<double>(heap_bytes_in_use());
    auto started = std::chrono::steady_clock::now();
    std::vector<at::Tensor> outputs = precision.run_unit(chain, unit, unit_inputs);
    const double forward_s = seconds_since(started);
    const double output_bytes = bytes_of(outputs);  // what the rank keeps of them
    const double saved =
        std::max(0.0, static_cast<double>(heap_bytes_in_use()) - heap_before - output_bytes);
    const BackwardRoots start = ones_for(outputs);
    started = std::chrono::steady_clock::now();
    if (!start.roots.empty()) torch::autograd::backward(start.roots, start.grads);
    const double backward_s = seconds_since(started);

    // The split backward as the executor runs it (baton/runtime/split_backward.h): I from
    // the outputs to the inputs, capturing what W needs; W from the weight roots, its
    // gradients accumulated into .grad.
    const std::vector<at::Tensor> split_inputs = stage_inputs(values, unit > 0);
    std::vector<at::Tensor> split_outputs = precision.run_unit(chain, unit, split_inputs);
    const std::vector<at::Tensor> output_grads = split_grads_for(split_outputs);
    double input_grad_s = 0, weight_grad_s = 0;
    if (!start.roots.empty()) {
      started = std::chrono::steady_clock::now();  // I includes classifying the graph
      baton::SplitBackward split(split_outputs, split_inputs, params);
      split.backward_input(output_grads);
      input_grad_s = seconds_since(started);
      started = std::chrono::steady_clock::now();
      split.backward_weight();
      weight_grad_s = seconds_since(started);
    }
    if (pass == 1) times.saved.push_back(saved);
    if (pass >= 2) {
      times.forward.push_back(forward_s);
      times.backward.push_back(backward_s);
      times.input_grad.push_back(input_grad_s);
      times.weight_grad.push_back(weight_grad_s);
    }
    profile.name = chain.unit_name(unit);
    profile.output_bytes = precision.wire_bytes(outputs);  // what crosses to the next rank
    profile.parameter_bytes = precision.parameter_bytes(params);
    values = outputs;
  }
  companions.stop();
}

// The medians of what the passes collected.
MicrobatchProfile finish_size(baton::UnitChain& chain, SizeSamples& size) {
  MicrobatchProfile measured = size.measured;
  drop_gradients(chain);
  for (int unit = 0; unit < chain.num_units(); ++unit) {
    UnitProfile& profile = measured.units[static_cast<std::size_t>(unit)];
    const Samples& times = size.samples[static_cast<std::size_t>(unit)];
    profile.forward_s = upper_median(times.forward);
    profile.backward_s = upper_median(times.backward);
    profile.backward_input_s = upper_median(times.input_grad);
    profile.backward_weight_s = upper_median(times.weight_grad);
    profile.saved_bytes = upper_median(times.saved);
  }
  return measured;
}

// A stage's split backward run as a pipeline rank runs it does not cost what its units' I
// and W add up to (a stage keeps more of the graph alive between its I and its W than one
// unit does, and the ratio differs by model). So the profile times it as a rank does, beside
// the units: the chain cut into (at most) two stages, a few microbatches in turn, each
// stage's backward after the next one's, a round of full backwards then a round of split
// ones, in company. The factor is the stages' (I + W) / B over the units' (I + W) / B: the
// median over every pair of rounds at every microbatch size, since one size's few pairs
// alone scatter too much to trust.
class SplitBackwardCalibration {
 public:
  SplitBackwardCalibration(baton::UnitChain& chain, const UnitPrecision& precision,
                           CompanionLoad& companions)
      : chain_(chain), precision_(precision), companions_(companions) {
    const int units = chain.num_units();
    bounds_ = units >= 2 ? std::vector<int>{0, units / 2, units} : std::vector<int>{0, units};
    params_.resize(bounds_.size() - 1);
    for (std::size_t s = 0; s + 1 < bounds_.size(); ++s) {
      for (int unit = bounds_[s]; unit < bounds_[s + 1]; ++unit) {
        for (auto& named : chain.unit_parameters(unit)) params_[s].push_back(named.second);
      }
    }
  }

  double factor(const std::vector<SizeSamples>& sizes,
                const std::vector<MicrobatchProfile>& measured) {
    std::vector<double> factors;
    for (std::size_t index = 0; index < sizes.size(); ++index) {
      double units_split = 0, units_full = 0;
      for (const UnitProfile& unit : measured[index].units) {
        units_split += unit.backward_input_s + unit.backward_weight_s;
        units_full += unit.backward_s;
      }
      if (units_split <= 0 || units_full <= 0) continue;
      for (const double stages : stage_ratios(sizes[index].inputs)) {
        factors.push_back(stages / (units_split / units_full));
      }
    }
    return factors.empty() ? 1.0 : upper_median(factors);
  }

 private:
  struct StageRun {
    std::vector<at::Tensor> inputs, outputs;
  };

  StageRun forward(std::size_t stage, const std::vector<at::Tensor>& values) {
    StageRun run;
    run.inputs = stage_inputs(values, stage > 0);
    run.outputs = run_units(chain_, precision_, bounds_[stage], bounds_[stage + 1], run.inputs);
    return run;
  }

  // Seconds all the backwards of one round took.
  double round_seconds(const std::vector<at::Tensor>& inputs, bool split) {
    double seconds = 0;
    for (int microbatch = 0; microbatch < kMicrobatches; ++microbatch) {
      std::vector<StageRun> runs;
      std::vector<at::Tensor> values = inputs;
      for (std::size_t stage = 0; stage < params_.size(); ++stage) {
        runs.push_back(forward(stage, values));
        values = runs.back().outputs;
      }
      for (std::size_t stage = runs.size(); stage-- > 0;) {
        const StageRun& run = runs[stage];
        if (split) {
          const std::vector<at::Tensor> output_grads = split_grads_for(run.outputs);
          if (output_grads.empty()) continue;
          const auto started = std::chrono::steady_clock::now();
          baton::SplitBackward backward(run.outputs, run.inputs, params_[stage]);
          backward.backward_input(output_grads);
          backward.backward_weight();
          seconds += seconds_since(started);
        } else {
          const BackwardRoots start = ones_for(run.outputs);
          if (start.roots.empty()) continue;
          const auto started = std::chrono::steady_clock::now();
          torch::autograd::backward(start.roots, start.grads);
          seconds += seconds_since(started);
        }
      }
    }
    return seconds;
  }

  // Per pair of rounds: the split round's time over the full round's before it.
  std::vector<double> stage_ratios(const std::vector<at::Tensor>& inputs) {
    companions_.start(inputs);
    std::vector<double> ratios;
    for (int pair = 0; pair <= kPairs; ++pair) {
      const double full = round_seconds(inputs, false);
      const double split = round_seconds(inputs, true);
      if (pair > 0 && full > 0 && split > 0) ratios.push_back(split / full);  // 0 warms up
    }
    companions_.stop();
    drop_gradients(chain_);
    return ratios;
  }

  static constexpr int kMicrobatches = 4;
  static constexpr int kPairs = 5;
  baton::UnitChain& chain_;
  const UnitPrecision& precision_;
  CompanionLoad& companions_;
  std::vector<int> bounds_;
  std::vector<std::vector<at::Tensor>> params_;
};

// The ranks of a run that share this machine with rank 0, less one, and no more than the
// other cores: `baton launch` starts every rank here.
int companions_for(int ranks) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(0, std::min(ranks, cores) - 1);
}

}  // namespace

ProfileSettings read_profile_settings(const baton::Config& config) {
  ProfileSettings settings;
  settings.model = baton_models::read_model_settings(config);
  settings.data = baton_models::read_data_settings(config);
  settings.ranks = static_cast<int>(config.section("world").get_int("ranks"));
  settings.transfer = read_transfer_settings(config);
  std::string& text = settings.configured;
  for (const auto& [key, value] : config.section("model").all()) {
    text += (text.empty() ? "" : ",") + key + "=" + value.text();
  }
  // The parameters as written (plugin parameters are checked later, by their plugin).
  const auto append_raw = [&](const std::string& section) {
    for (const auto& [key, value] : config.raw_params(section).entries) {
      text += "," + key + "=";
      if (!value.is_list) {
        text += value.scalar;
      } else {
        for (const std::string& item : value.items) text += item + " ";
      }
    }
  };
  append_raw("model");
  text += ";transport=" + config.section("transport").get_string("name");
  append_raw("transport");
  text += ";batch=" + std::to_string(settings.data.batch_size);
  // What the units compute in and send as (unit_precision.h); the rest of the section (the
  // replicas' reduction, loss scaling) leaves the units' costs as they are.
  settings.precision = read_precision_settings(config);
  const baton::ParamValues& precision = config.section("precision");
  for (const char* key : {"compute", "params", "wire"}) {
    text += std::string(";precision.") + key + "=" + precision.at(key).text();
  }
  return settings;
}

std::string profile_fingerprint(const ProfileSettings& settings) {
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  return settings.configured + ";threads=" + std::to_string(at::get_num_threads()) +
         ";host=" + host + ";cpus=" + std::to_string(std::thread::hardware_concurrency()) +
         ";companions=" + std::to_string(companions_for(settings.ranks));
}

ModelProfile profile_model(const ProfileSettings& settings, const std::string& data_dir,
                           std::chrono::milliseconds timeout, int repeats) {
  baton_models::BuiltModel model = baton_models::build_model(settings.model, /*seed=*/0);
  const auto batches = baton_models::make_batch_source(settings.data, model, data_dir);
  const UnitPrecision precision(settings.precision);
  const std::vector<at::Tensor> inputs = precision.model_inputs(batches->batch(1).inputs);
  model.chain->set_training(true);
  precision.cast_chain(*model.chain);
  ModelProfile profile;
  profile.model = settings.model.name.value;
  profile.fingerprint = profile_fingerprint(settings);
  profile.batch_size = static_cast<int>(settings.data.batch_size);
  double largest_message = 0;
  CompanionLoad companions(settings.model, precision, companions_for(settings.ranks));
  std::vector<SizeSamples> sizes;
  for (int microbatches = profile.batch_size; microbatches >= 1; --microbatches) {
    if (profile.batch_size % microbatches != 0) continue;
    sizes.push_back(
        start_size(*model.chain, baton::split_microbatches(inputs, microbatches, 0).at(0)));
  }
  // Pass after pass over all the sizes, every other one in reverse, rather than one size's
  // passes back to back: the machine's speed swings within seconds, and each size's median
  // then comes from several moments, as do the other sizes' it is compared with.
  for (int pass = 0; pass <= repeats + 1; ++pass) {
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      profile_pass(*model.chain, precision, sizes[pass % 2 == 0 ? k : sizes.size() - 1 - k], pass,
                   companions);
    }
  }
  for (SizeSamples& size : sizes) {
    profile.sizes.push_back(finish_size(*model.chain, size));
    for (const UnitProfile& unit : profile.sizes.back().units) {
      largest_message = std::max(largest_message, unit.output_bytes);
    }
  }
  profile.split_backward_factor =
      SplitBackwardCalibration(*model.chain, precision, companions).factor(sizes, profile.sizes);
  profile.transfer = profile_transfers(settings.transfer, largest_message, timeout);
  return profile;
}

CachedProfile cached_or_measured_profile(const ProfileSettings& settings, const std::string& path,
                                         const std::string& data_dir,
                                         std::chrono::milliseconds timeout) {
  CachedProfile cached;
  if (std::filesystem::exists(path)) {
    try {
      cached.profile = read_profile(path, profile_fingerprint(settings));
      cached.reused = true;
      return cached;
    } catch (const baton::ConfigError& error) {
      cached.why_measured = error.what();
    }
  }
  // Measured only where it may be written: never over a user's file (a YAML given as --profile).
  check_output_file(path, "profile", "a profile", is_profile_file);
  cached.profile = profile_model(settings, data_dir, timeout);
  const std::string folder = std::filesystem::path(path).parent_path().string();
  if (!folder.empty()) baton::make_folders(folder, "profile");
  write_profile(path, cached.profile);
  return cached;
}

}  // namespace baton_app
