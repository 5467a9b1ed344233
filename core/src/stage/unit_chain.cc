#include "baton/unit_chain.h"

#include <algorithm>
#include <numeric>

#include "baton/error.h"

namespace baton {
namespace {

class ChainStage : public Stage {
 public:
  ChainStage(std::shared_ptr<UnitChain> chain, int index, int first, int end)
      : chain_(std::move(chain)), index_(index), first_(first), end_(end) {}

  int index() const override { return index_; }

  std::string describe() const override {
    return "stage " + std::to_string(index_) + " (" + chain_->unit_name(first_) +
           (end_ - first_ > 1 ? " .. " + chain_->unit_name(end_ - 1) : "") + ")";
  }

  std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs) override {
    std::vector<at::Tensor> values = inputs;
    for (int unit = first_; unit < end_; ++unit) values = chain_->run_unit(unit, values);
    return values;
  }

  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const override {
    std::vector<std::pair<std::string, at::Tensor>> params;
    for (int unit = first_; unit < end_; ++unit) {
      for (auto& named : chain_->unit_parameters(unit)) params.push_back(std::move(named));
    }
    return params;
  }

  std::vector<std::pair<std::string, at::Tensor>> named_buffers() const override {
    std::vector<std::pair<std::string, at::Tensor>> buffers;
    for (int unit = first_; unit < end_; ++unit) {
      for (auto& named : chain_->unit_buffers(unit)) buffers.push_back(std::move(named));
    }
    return buffers;
  }

  void set_training(bool training) override { chain_->set_training(training); }

 private:
  std::shared_ptr<UnitChain> chain_;
  int index_, first_, end_;
};

std::int64_t parameter_count(const UnitChain& chain, int unit) {
  std::int64_t count = 0;
  for (const auto& named : chain.unit_parameters(unit)) count += named.second.numel();
  return count;
}

}  // namespace

UnitChain::~UnitChain() = default;

std::vector<std::pair<std::string, at::Tensor>> UnitChain::unit_buffers(int /*unit*/) const {
  return {};
}

void UnitChain::move_unit(int unit, c10::Device device) {
  for (const auto& named : unit_parameters(unit)) {
    at::Tensor tensor = named.second;
    tensor.set_data(tensor.to(device));
  }
  for (const auto& named : unit_buffers(unit)) {
    at::Tensor tensor = named.second;
    tensor.set_data(tensor.to(device));
  }
}

std::shared_ptr<Stage> make_chain_stage(std::shared_ptr<UnitChain> chain, int stage_index,
                                        int first_unit, int end_unit) {
  if (first_unit < 0 || end_unit > chain->num_units() || first_unit >= end_unit) {
    throw Error("stage " + std::to_string(stage_index) + ": units [" + std::to_string(first_unit) +
                ", " + std::to_string(end_unit) + ") are not a non-empty range of the model's " +
                std::to_string(chain->num_units()) + " units");
  }
  return std::make_shared<ChainStage>(std::move(chain), stage_index, first_unit, end_unit);
}

std::vector<int> stage_boundaries(const UnitChain& chain, int num_stages,
                                  const std::vector<std::int64_t>& cuts) {
  const int units = chain.num_units();
  auto unit_list = [&] {
    std::string text;
    for (int u = 0; u < units; ++u)
      text += (u ? ", " : "") + std::to_string(u) + ":" + chain.unit_name(u);
    return text;
  };
  if (num_stages > units) {
    throw ConfigError("the pipeline needs " + std::to_string(num_stages) +
                      " stages but the model has only " + std::to_string(units) +
                      " units to cut between (" + unit_list() +
                      "); use fewer ranks or stages per rank, or a deeper model");
  }
  std::vector<int> bounds{0};
  if (!cuts.empty()) {
    if (static_cast<int>(cuts.size()) != num_stages - 1) {
      throw ConfigError("model.cuts has " + std::to_string(cuts.size()) + " entries; " +
                        std::to_string(num_stages) + " stages need " +
                        std::to_string(num_stages - 1) +
                        " (the unit where each stage after the "
                        "first begins). Units: " +
                        unit_list());
    }
    for (std::int64_t cut : cuts) {
      if (cut <= bounds.back() || cut >= units) {
        throw ConfigError("model.cuts must be increasing unit indices in 1.." +
                          std::to_string(units - 1) + ", got " + std::to_string(cut) + " after " +
                          std::to_string(bounds.back()) + ". Units: " + unit_list());
      }
      bounds.push_back(static_cast<int>(cut));
    }
    bounds.push_back(units);
    return bounds;
  }
  // Greedy balance on parameter counts: cut when the running total passes the next ideal
  // boundary, keeping at least one unit for every stage still to come.
  std::vector<std::int64_t> counts(static_cast<std::size_t>(units));
  for (int u = 0; u < units; ++u) counts[static_cast<std::size_t>(u)] = parameter_count(chain, u);
  const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  std::int64_t running = 0;
  for (int u = 0; u < units && static_cast<int>(bounds.size()) < num_stages; ++u) {
    running += counts[static_cast<std::size_t>(u)];
    const int stage = static_cast<int>(bounds.size());
    const int units_left = units - (u + 1);
    const int stages_left = num_stages - stage;
    const double ideal = static_cast<double>(total) * stage / num_stages;
    if (units_left == stages_left ||
        (static_cast<double>(running) >= ideal && units_left >= stages_left)) {
      bounds.push_back(u + 1);
    }
  }
  bounds.push_back(units);
  return bounds;
}

std::vector<at::Tensor> run_whole_chain(UnitChain& chain, const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> values = inputs;
  for (int unit = 0; unit < chain.num_units(); ++unit) values = chain.run_unit(unit, values);
  return values;
}

std::vector<std::pair<std::string, at::Tensor>> all_buffers(const UnitChain& chain) {
  std::vector<std::pair<std::string, at::Tensor>> buffers;
  for (int unit = 0; unit < chain.num_units(); ++unit) {
    for (auto& named : chain.unit_buffers(unit)) buffers.push_back(std::move(named));
  }
  return buffers;
}

}  // namespace baton
