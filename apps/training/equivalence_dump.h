// What an equivalence test compares with plain PyTorch (TrainOptions::dump_dir): each rank
// writes <dump_dir>/rank<r>.pt (a dict readable by torch.load and torch::pickle_load) with
// the parameters a run starts from ("initial.<name>"), the gradients of its first step
// ("grad.<name>"), its losses ("loss", on the last stage's rank), its final parameters
// ("param.<name>") and buffers ("buffer.<name>": a BatchNorm's running statistics), every step's
// learning rate ("lr") and, where measured, the gradient's norm before clipping ("grad_norm"), and
// the receive-buffer allocations after step 1 and at the end. Does nothing without a dump folder.
#pragma once

#include <ATen/core/Dict.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace baton_app {

class EquivalenceDump {
 public:
  using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

  EquivalenceDump(std::string dir, int rank) : dir_(std::move(dir)), rank_(rank) {}

  void record_initial(const NamedTensors& params);
  // The threads each of the rank's ops ran with ("threads"): a reference computing bf16 ops
  // whose outputs are reductions takes the same, so that its threads split the sums as
  // baton's did.
  void record_threads(int threads);
  void record_gradients(const NamedTensors& params);
  // One step's rate and norm (empty: not measured; a nan: a step skipped for an overflow,
  // whose norm clipping would have taken).
  void record_step(double lr, std::optional<double> grad_norm);
  // The held-out loss after `step` ("eval_loss", "eval_steps").
  void record_eval(int step, double loss);
  void write(const NamedTensors& params, const NamedTensors& buffers,
             const std::vector<double>& losses, std::int64_t buffers_after_first_step,
             std::int64_t buffers_at_end);

 private:
  std::string dir_;
  int rank_;
  c10::Dict<std::string, at::Tensor> dump_;
  std::vector<double> lrs_;
  std::vector<double> grad_norms_;
  std::vector<double> eval_losses_;
  std::vector<std::int64_t> eval_steps_;
};

}  // namespace baton_app
