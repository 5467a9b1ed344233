#include "unit_costs.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <chrono>

#include "baton/runtime/buffers_kept.h"
#include "median.h"
#include "stopwatch.h"

namespace baton_app {

std::vector<UnitCost> measure_unit_costs(baton::UnitChain& chain,
                                         const std::vector<at::Tensor>& inputs, int repeats) {
  const int units = chain.num_units();
  std::vector<std::vector<double>> forward(static_cast<std::size_t>(units));
  std::vector<std::vector<double>> backward(static_cast<std::size_t>(units));
  const baton::BuffersKept kept(baton::all_buffers(chain));  // timing trains no statistics
  // One untimed pass first: allocator and thread-pool warm-up would be charged to unit 0.
  for (int pass = 0; pass <= std::max(1, repeats); ++pass) {
    std::vector<at::Tensor> values = inputs;
    for (int unit = 0; unit < units; ++unit) {
      // Inputs of every unit but the first need gradients, as they do inside a pipeline.
      std::vector<at::Tensor> unit_inputs;
      for (const auto& value : values) {
        at::Tensor input = value.detach();
        if (unit > 0 && at::isFloatingType(input.scalar_type())) input.requires_grad_(true);
        unit_inputs.push_back(input);
      }
      auto started = std::chrono::steady_clock::now();
      std::vector<at::Tensor> outputs = chain.run_unit(unit, unit_inputs);
      const double forward_seconds = seconds_since(started);
      std::vector<at::Tensor> roots, grads;
      for (const auto& output : outputs) {
        if (output.requires_grad()) {
          roots.push_back(output);
          grads.push_back(at::ones_like(output));
        }
      }
      started = std::chrono::steady_clock::now();
      if (!roots.empty()) torch::autograd::backward(roots, grads);
      const double backward_seconds = seconds_since(started);
      if (pass > 0) {
        forward[static_cast<std::size_t>(unit)].push_back(forward_seconds);
        backward[static_cast<std::size_t>(unit)].push_back(backward_seconds);
      }
      values = outputs;
    }
  }
  for (int unit = 0; unit < units; ++unit) {
    for (auto& named : chain.unit_parameters(unit)) {
      if (named.second.grad().defined()) named.second.mutable_grad() = at::Tensor();
    }
  }
  std::vector<UnitCost> costs(static_cast<std::size_t>(units));
  for (std::size_t u = 0; u < costs.size(); ++u) {
    costs[u].forward_seconds = upper_median(forward[u]);
    costs[u].backward_seconds = upper_median(backward[u]);
  }
  return costs;
}

}  // namespace baton_app
