// A model as an ordered chain of named units — its top-level children, with containers
// (ModuleList, Sequential) expanded into their items — so it can be cut into stages
// between units. Unit names are the model's own ("embed", "layers.3", "head"), so stages
// keep the original parameter names.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/export.h"
#include "baton/stage.h"

namespace baton {

class BATON_API UnitChain {
 public:
  virtual ~UnitChain();
  virtual int num_units() const = 0;
  virtual std::string unit_name(int unit) const = 0;
  // Runs one unit: the first unit takes the model's inputs, each later unit the previous
  // unit's outputs.
  virtual std::vector<at::Tensor> run_unit(int unit, const std::vector<at::Tensor>& inputs) = 0;
  // The unit's parameters under their full-model names.
  virtual std::vector<std::pair<std::string, at::Tensor>> unit_parameters(int unit) const = 0;
  // The unit's buffers that belong in the full model's state dict, under their full-model
  // names (none unless the chain knows which buffers the model persists).
  virtual std::vector<std::pair<std::string, at::Tensor>> unit_buffers(int unit) const;
  virtual void set_training(bool training) = 0;
  // Moves the unit's parameters and buffers to `device` in place (their tensors keep their
  // identity, as PyTorch's Module.to() does). The default moves what unit_parameters() and
  // unit_buffers() list.
  virtual void move_unit(int unit, c10::Device device);
};

// Stage `stage_index` made of units [first_unit, end_unit) of `chain`.
BATON_API std::shared_ptr<Stage> make_chain_stage(std::shared_ptr<UnitChain> chain, int stage_index,
                                                  int first_unit, int end_unit);

// Where each stage starts: `cuts` are the unit indices where stages 1..n-1 begin (given by
// the user: model.cuts), or, when empty, chosen so stages hold parameter counts as equal as
// possible. Returns n+1 boundaries (0, …, num_units). Throws ConfigError naming the units
// when the cuts are out of order, out of range, or leave a stage empty.
BATON_API std::vector<int> stage_boundaries(const UnitChain& chain, int num_stages,
                                            const std::vector<std::int64_t>& cuts);

// Every unit in order: the unpipelined model, for references and checks.
BATON_API std::vector<at::Tensor> run_whole_chain(UnitChain& chain,
                                                  const std::vector<at::Tensor>& inputs);

// Every unit's buffers, in order (for BuffersKept around a probe of the whole chain).
BATON_API std::vector<std::pair<std::string, at::Tensor>> all_buffers(const UnitChain& chain);

}  // namespace baton
