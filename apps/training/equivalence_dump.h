// What an equivalence test compares with plain PyTorch (TrainOptions::dump_dir): each rank
// writes <dump_dir>/rank<r>.pt (a dict readable by torch.load and torch::pickle_load) with
// the parameters a run starts from ("initial.<name>"), the gradients of its first step
// ("grad.<name>"), its losses ("loss", on the last stage's rank), its final parameters
// ("param.<name>") and the receive-buffer allocations after step 1 and at the end. Does
// nothing without a dump folder.
#pragma once

#include <ATen/core/Dict.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace baton_app {

class EquivalenceDump {
 public:
  using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

  EquivalenceDump(std::string dir, int rank) : dir_(std::move(dir)), rank_(rank) {}

  void record_initial(const NamedTensors& params);
  void record_gradients(const NamedTensors& params);
  void write(const NamedTensors& params, const std::vector<double>& losses,
             std::int64_t buffers_after_first_step, std::int64_t buffers_at_end);

 private:
  std::string dir_;
  int rank_;
  c10::Dict<std::string, at::Tensor> dump_;
};

}  // namespace baton_app
