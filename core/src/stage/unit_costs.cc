#include "baton/unit_costs.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "baton/error.h"

namespace baton {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::vector<UnitCost> measure_unit_costs(UnitChain& chain, const std::vector<at::Tensor>& inputs,
                                         int repeats) {
  const int units = chain.num_units();
  std::vector<std::vector<double>> forward(static_cast<std::size_t>(units));
  std::vector<std::vector<double>> backward(static_cast<std::size_t>(units));
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
    costs[u].forward_seconds = median(forward[u]);
    costs[u].backward_seconds = median(backward[u]);
  }
  return costs;
}

std::vector<int> balanced_boundaries(const std::vector<double>& unit_costs, int num_stages) {
  const int units = static_cast<int>(unit_costs.size());
  if (num_stages < 1 || num_stages > units) {
    throw ConfigError("cannot cut " + std::to_string(units) + " units into " +
                      std::to_string(num_stages) + " stages");
  }
  std::vector<double> prefix(static_cast<std::size_t>(units) + 1, 0.0);
  for (int u = 0; u < units; ++u)
    prefix[static_cast<std::size_t>(u) + 1] = prefix[static_cast<std::size_t>(u)] + unit_costs[u];
  auto cost = [&](int from, int to) { return prefix[to] - prefix[from]; };
  // best[s][u]: the smallest largest-stage cost of units [0, u) in s stages; min-max over
  // contiguous partitions, small enough (units x stages x units) to solve exactly.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(
      static_cast<std::size_t>(num_stages) + 1,
      std::vector<double>(static_cast<std::size_t>(units) + 1, inf));
  std::vector<std::vector<int>> cut(best.size(), std::vector<int>(best[0].size(), 0));
  best[0][0] = 0.0;
  for (int s = 1; s <= num_stages; ++s) {
    for (int u = s; u <= units - (num_stages - s); ++u) {
      for (int from = s - 1; from < u; ++from) {
        const double candidate = std::max(best[s - 1][from], cost(from, u));
        // Ties go to the later cut, which keeps the last stage (which also runs the loss)
        // no larger than the others.
        if (candidate <= best[s][u]) {
          best[s][u] = candidate;
          cut[s][u] = from;
        }
      }
    }
  }
  std::vector<int> bounds(static_cast<std::size_t>(num_stages) + 1);
  bounds[static_cast<std::size_t>(num_stages)] = units;
  for (int s = num_stages; s > 0; --s) bounds[s - 1] = cut[s][bounds[s]];
  return bounds;
}

}  // namespace baton
