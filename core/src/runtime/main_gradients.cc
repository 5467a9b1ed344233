#include "main_gradients.h"

#include <ATen/ATen.h>

#include "baton/error.h"
#include "baton/runtime/gradient_sync.h"

namespace baton {

MainGradients::MainGradients(const std::vector<std::pair<at::Tensor, at::Tensor>>& masters) {
  for (const auto& [param, master] : masters) master_of_[param.unsafeGetTensorImpl()] = master;
}

std::vector<at::Tensor> distinct_holders(const GradientHolders& holders,
                                         const std::set<std::string>& left_out) {
  std::vector<at::Tensor> distinct;
  std::set<const void*> seen;
  for (const auto& entry : holders) {
    for (const auto& [name, holder] : entry.second) {
      if (left_out.count(name) > 0) continue;
      if (seen.insert(holder.unsafeGetTensorImpl()).second) distinct.push_back(holder);
    }
  }
  return distinct;
}

std::vector<at::Tensor> defined_gradients(const std::vector<at::Tensor>& holders) {
  std::vector<at::Tensor> grads;
  for (const at::Tensor& holder : holders) {
    if (holder.grad().defined()) grads.push_back(holder.grad());
  }
  return grads;
}

GradientHolders MainGradients::join(const std::map<int, std::shared_ptr<Stage>>& stages) {
  GradientHolders holders;
  for (const auto& [stage, held] : stages) {
    auto& named_holders = holders[stage];
    if (empty()) {  // no masters: the parameters hold their own, and fold() finds no stage
      named_holders = held->named_parameters();
      continue;
    }
    auto& stage_folds = folds_[stage];
    for (const auto& [name, param] : held->named_parameters()) {
      const auto found = master_of_.find(param.unsafeGetTensorImpl());
      if (found == master_of_.end()) {
        named_holders.emplace_back(name, param);
        stage_folds.emplace_back();
        continue;
      }
      const at::Tensor& master = found->second;
      if (!master.sizes().equals(param.sizes()) || master.scalar_type() != at::kFloat ||
          !master.is_leaf()) {
        throw Error("the float32 master of parameter '" + name + "' of stage " +
                    std::to_string(stage) + " is a " +
                    std::string(c10::toString(master.scalar_type())) +
                    " tensor of another shape or not a leaf; it must be a float32 leaf of the "
                    "parameter's shape");
      }
      named_holders.emplace_back(name, master);
      stage_folds.emplace_back(param, master);
    }
  }
  return holders;
}

void fold_into_master(const at::Tensor& param, const at::Tensor& master) {
  at::Tensor& grad = param.mutable_grad();
  if (!grad.defined()) return;
  at::Tensor& main_grad = master.mutable_grad();
  if (main_grad.defined()) {
    main_grad.add_(grad);  // float32 += bf16: the addition in float32
  } else {
    main_grad = grad.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  }
  grad = at::Tensor();
}

void MainGradients::fold(int stage, std::size_t param_index) {
  const auto found = folds_.find(stage);
  if (found == folds_.end() || param_index >= found->second.size()) return;
  const auto& [param, master] = found->second[param_index];
  if (master.defined()) fold_into_master(param, master);
}

}  // namespace baton
