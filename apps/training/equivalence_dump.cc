#include "equivalence_dump.h"

#include <torch/serialize.h>

#include "baton/files.h"

namespace baton_app {

void EquivalenceDump::record_initial(const NamedTensors& params) {
  if (dir_.empty()) return;
  for (const auto& [name, param] : params) dump_.insert("initial." + name, param.detach().clone());
}

void EquivalenceDump::record_gradients(const NamedTensors& params) {
  if (dir_.empty()) return;
  for (const auto& [name, param] : params) {
    if (param.grad().defined()) dump_.insert("grad." + name, param.grad().clone());
  }
}

void EquivalenceDump::write(const NamedTensors& params, const std::vector<double>& losses,
                            std::int64_t buffers_after_first_step, std::int64_t buffers_at_end) {
  if (dir_.empty()) return;
  for (const auto& [name, param] : params) dump_.insert("param." + name, param.detach().clone());
  if (!losses.empty()) dump_.insert("loss", at::tensor(losses, at::kDouble));
  // Receive buffers are allocated once, at setup: the count must not move after step 1.
  dump_.insert("recv_buffer_allocations",
               at::tensor({buffers_after_first_step, buffers_at_end}, at::kLong));
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dump_));
  baton::make_folders(dir_, "--dump-dir");
  baton::write_file_atomically(dir_ + "/rank" + std::to_string(rank_) + ".pt",
                               std::string(bytes.begin(), bytes.end()));
}

}  // namespace baton_app
