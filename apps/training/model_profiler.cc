#include "model_profiler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <malloc.h>
#include <torch/csrc/autograd/autograd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/runtime/microbatch.h"
#include "baton/runtime/split_backward.h"
#include "models/batches.h"
#include "models/model_catalog.h"
#include "run_settings.h"
#include "transfer_profiler.h"

namespace baton_app {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

double heap_in_use() {
  return static_cast<double>(mallinfo2().uordblks);
}

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

struct Samples {
  std::vector<double> forward, backward, input_grad, weight_grad, saved;
};

MicrobatchProfile profile_size(baton::UnitChain& chain, const std::vector<at::Tensor>& inputs,
                               int repeats) {
  const int units = chain.num_units();
  std::vector<Samples> samples(static_cast<std::size_t>(units));
  MicrobatchProfile measured;
  measured.microbatch_size = static_cast<int>(inputs.front().size(0));
  measured.input_bytes = bytes_of(inputs);
  measured.units.resize(static_cast<std::size_t>(units));
  for (int pass = 0; pass <= repeats; ++pass) {
    std::vector<at::Tensor> values = inputs;
    for (int unit = 0; unit < units; ++unit) {
      UnitProfile& profile = measured.units[static_cast<std::size_t>(unit)];
      Samples& times = samples[static_cast<std::size_t>(unit)];
      std::vector<at::Tensor> params;
      for (auto& named : chain.unit_parameters(unit)) params.push_back(named.second);

      // Forward, twice: once for the full backward, once for the split one (I, then W).
      const std::vector<at::Tensor> unit_inputs = stage_inputs(values, unit > 0);
      const double heap_before = heap_in_use();
      auto started = std::chrono::steady_clock::now();
      std::vector<at::Tensor> outputs = chain.run_unit(unit, unit_inputs);
      const double forward_s = seconds_since(started);
      const double output_bytes = bytes_of(outputs);
      const double saved = std::max(0.0, heap_in_use() - heap_before - output_bytes);
      std::vector<at::Tensor> roots, grads;
      for (const at::Tensor& output : outputs) {
        if (output.requires_grad()) {
          roots.push_back(output);
          grads.push_back(at::ones_like(output));
        }
      }
      started = std::chrono::steady_clock::now();
      if (!roots.empty()) torch::autograd::backward(roots, grads);
      const double backward_s = seconds_since(started);

      // The split backward as the executor runs it (baton/runtime/split_backward.h): I from
      // the outputs to the inputs, capturing what W needs; W from the weight roots, its
      // gradients accumulated into .grad.
      const std::vector<at::Tensor> split_inputs = stage_inputs(values, unit > 0);
      std::vector<at::Tensor> split_outputs = chain.run_unit(unit, split_inputs);
      std::vector<at::Tensor> output_grads;
      for (const at::Tensor& output : split_outputs) {
        output_grads.push_back(output.requires_grad() ? at::ones_like(output) : at::Tensor());
      }
      double input_grad_s = 0, weight_grad_s = 0;
      if (!roots.empty()) {
        started = std::chrono::steady_clock::now();  // I includes classifying the graph
        baton::SplitBackward split(split_outputs, split_inputs, params);
        split.backward_input(output_grads);
        input_grad_s = seconds_since(started);
        started = std::chrono::steady_clock::now();
        split.backward_weight();
        weight_grad_s = seconds_since(started);
      }
      if (pass > 0) {  // the first pass warms the allocator and the thread pool up
        times.forward.push_back(forward_s);
        times.backward.push_back(backward_s);
        times.input_grad.push_back(input_grad_s);
        times.weight_grad.push_back(weight_grad_s);
        times.saved.push_back(saved);
      }
      profile.name = chain.unit_name(unit);
      profile.output_bytes = output_bytes;
      profile.parameter_bytes = bytes_of(params);
      values = outputs;
    }
  }
  for (int unit = 0; unit < units; ++unit) {
    for (auto& named : chain.unit_parameters(unit)) {
      if (named.second.grad().defined()) named.second.mutable_grad() = at::Tensor();
    }
    UnitProfile& profile = measured.units[static_cast<std::size_t>(unit)];
    const Samples& times = samples[static_cast<std::size_t>(unit)];
    profile.forward_s = median(times.forward);
    profile.backward_s = median(times.backward);
    profile.backward_input_s = median(times.input_grad);
    profile.backward_weight_s = median(times.weight_grad);
    profile.saved_bytes = median(times.saved);
  }
  return measured;
}

}  // namespace

std::string profile_fingerprint(const baton::Config& config) {
  std::string text;
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
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  text += ";batch=" + std::to_string(config.section("data").get_int("batch_size")) +
          ";threads=" + std::to_string(at::get_num_threads()) + ";host=" + host +
          ";cpus=" + std::to_string(std::thread::hardware_concurrency());
  return text;
}

ModelProfile profile_model(baton::Config& config, const std::string& data_dir, int repeats) {
  baton_models::BuiltModel model =
      baton_models::build_model(baton_models::read_model_settings(config), /*seed=*/0);
  const auto batches =
      baton_models::make_batch_source(baton_models::read_data_settings(config), model, data_dir);
  const std::vector<at::Tensor> inputs = batches->batch(1).inputs;
  model.chain->set_training(true);
  ModelProfile profile;
  profile.model = config.section("model").get_string("name");
  profile.fingerprint = profile_fingerprint(config);
  profile.batch_size = static_cast<int>(config.section("data").get_int("batch_size"));
  double largest_message = 0;
  for (int microbatches = profile.batch_size; microbatches >= 1; --microbatches) {
    if (profile.batch_size % microbatches != 0) continue;
    const auto split = baton::split_microbatches(inputs, microbatches, 0);
    profile.sizes.push_back(profile_size(*model.chain, split.at(0), repeats));
    for (const UnitProfile& unit : profile.sizes.back().units) {
      largest_message = std::max(largest_message, unit.output_bytes);
    }
  }
  profile.transfer = profile_transfers(config, largest_message, read_run_settings(config).timeout);
  return profile;
}

CachedProfile cached_or_measured_profile(baton::Config& config, const std::string& path,
                                         const std::string& data_dir) {
  CachedProfile cached;
  if (std::filesystem::exists(path)) {
    try {
      cached.profile = read_profile(path, profile_fingerprint(config));
      cached.reused = true;
      return cached;
    } catch (const baton::ConfigError& error) {
      cached.why_measured = error.what();
    }
  }
  cached.profile = profile_model(config, data_dir);
  const std::string folder = std::filesystem::path(path).parent_path().string();
  if (!folder.empty()) baton::make_folders(folder, "profile");
  write_profile(path, cached.profile);
  return cached;
}

}  // namespace baton_app
