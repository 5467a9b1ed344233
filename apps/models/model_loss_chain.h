// A model that computes its own loss (model.loss: from_model): baton-split traced its
// forward with targets, so the last stage file takes them as its last input and returns the
// loss, a mean over the targets other than ignore_index (stage_files_chain.h,
// ModelLossRecord).
//
// The runtime hands a stage's outputs and the microbatch's targets to the loss, so the chain
// runs the last stage there: as a unit, the last stage passes its inputs through; the loss
// runs the stage file on them and the targets. Its forward thus still runs inside the stage's
// forward (with its seed, under autocast, again for recomputation), and the backward from
// the loss reaches its parameters and inputs as before. The loss returned is the model's
// mean times the microbatch's count of targets — the sum baton's token mean divides by the
// global batch's count, so the step's loss is the model's own on the whole batch.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/stage_files_chain.h"
#include "baton/unit_chain.h"
#include "models.h"

namespace baton_models {

class ModelLossChain : public baton::UnitChain {
 public:
  ModelLossChain(std::shared_ptr<baton::UnitChain> files, baton::ModelLossRecord record);

  int num_units() const override;
  std::string unit_name(int unit) const override;
  std::vector<at::Tensor> run_unit(int unit, const std::vector<at::Tensor>& inputs) override;
  std::vector<std::pair<std::string, at::Tensor>> unit_parameters(int unit) const override;
  std::vector<std::pair<std::string, at::Tensor>> unit_buffers(int unit) const override;
  void set_training(bool training) override;
  void move_unit(int unit, c10::Device device) override;

  // The last stage on its inputs (`outputs`: what it passed through) and the targets: the
  // model's mean loss times the targets counted.
  at::Tensor loss(const std::vector<at::Tensor>& outputs, const at::Tensor& targets);
  // The targets a microbatch counts (BuiltModel::count_targets, which the executor asks of
  // every microbatch as a step begins). Throws when it counts none: the model's mean over
  // nothing is nan.
  std::int64_t count(const at::Tensor& targets) const;

 private:
  at::Tensor counted(const at::Tensor& targets) const;  // on the targets' device

  std::shared_ptr<baton::UnitChain> files_;
  baton::ModelLossRecord record_;
  int last_;
};

// For model.loss: from_model. Wraps model->chain, sets its loss, its target count, and the
// targets synthetic data draws (the recorded shape, below the logits' width). Throws
// ConfigError naming `setting` when the files record no loss of their own, or when
// model.ignore_index (`ignore_index`) is not the one the model's loss ignores.
void use_the_models_own_loss(BuiltModel* model, const baton::Setting<std::string>& setting,
                             const baton::Setting<std::int64_t>& ignore_index);

}  // namespace baton_models
