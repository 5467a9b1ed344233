#include "equivalence_dump.h"

#include <torch/serialize.h>

#include <cmath>

#include "baton/files.h"
#include "host_copy.h"
#include "owned_outputs.h"

namespace baton_app {

void EquivalenceDump::record_initial(const NamedTensors& params) {
  if (dir_.empty()) return;
  for (const auto& [name, param] : params) dump_.insert("initial." + name, host_copy(param));
}

void EquivalenceDump::record_threads(int threads) {
  dump_.insert("threads", at::tensor(std::int64_t{threads}, at::kLong));
}

void EquivalenceDump::record_gradients(const NamedTensors& params) {
  if (dir_.empty()) return;
  for (const auto& [name, param] : params) {
    if (param.grad().defined()) dump_.insert("grad." + name, host_copy(param.grad()));
  }
}

void EquivalenceDump::record_step(double lr, std::optional<double> grad_norm) {
  if (dir_.empty()) return;
  lrs_.push_back(lr);
  if (grad_norm) grad_norms_.push_back(*grad_norm);
}

void EquivalenceDump::record_eval(int step, double loss) {
  if (dir_.empty()) return;
  eval_steps_.push_back(step);
  eval_losses_.push_back(loss);
}

void EquivalenceDump::write(const NamedTensors& params, const NamedTensors& buffers,
                            const std::vector<double>& losses,
                            std::int64_t buffers_after_first_step, std::int64_t buffers_at_end) {
  if (dir_.empty()) return;
  for (const auto& [name, param] : params) dump_.insert("param." + name, host_copy(param));
  for (const auto& [name, buffer] : buffers) dump_.insert("buffer." + name, host_copy(buffer));
  if (!losses.empty()) dump_.insert("loss", at::tensor(losses, at::kDouble));
  if (!lrs_.empty()) dump_.insert("lr", at::tensor(lrs_, at::kDouble));
  if (!grad_norms_.empty()) dump_.insert("grad_norm", at::tensor(grad_norms_, at::kDouble));
  if (!eval_losses_.empty()) {
    dump_.insert("eval_loss", at::tensor(eval_losses_, at::kDouble));
    dump_.insert("eval_steps", at::tensor(eval_steps_, at::kLong));
  }
  // Receive buffers are allocated once, at setup: the count must not move after step 1.
  dump_.insert("recv_buffer_allocations",
               at::tensor({buffers_after_first_step, buffers_at_end}, at::kLong));
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dump_));
  baton::make_folders(dir_, "--dump-dir");
  baton::write_file_atomically(rank_file(dir_, rank_, ".pt"),
                               std::string(bytes.begin(), bytes.end()));
}

}  // namespace baton_app
