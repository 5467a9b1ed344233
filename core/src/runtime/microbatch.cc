#include "baton/runtime/microbatch.h"

#include <ATen/ATen.h>

#include "baton/error.h"

namespace baton {

std::vector<std::vector<at::Tensor>> split_microbatches(const std::vector<at::Tensor>& batch,
                                                        int microbatches, int dim) {
  if (microbatches < 1) throw ConfigError("microbatches must be at least 1");
  std::vector<std::vector<at::Tensor>> chunks(static_cast<std::size_t>(microbatches));
  std::int64_t batch_size = -1;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const at::Tensor& tensor = batch[i];
    if (tensor.dim() <= dim) {
      throw ConfigError("input " + std::to_string(i) + " has " + std::to_string(tensor.dim()) +
                        " dimensions; cannot split it into microbatches along dimension " +
                        std::to_string(dim));
    }
    const std::int64_t size = tensor.size(dim);
    if (batch_size >= 0 && size != batch_size) {
      throw ConfigError("input " + std::to_string(i) + " has batch size " + std::to_string(size) +
                        " but input 0 has " + std::to_string(batch_size) +
                        "; every input must have the same size along dimension " +
                        std::to_string(dim));
    }
    batch_size = size;
    if (size % microbatches != 0) {
      std::string workable;
      for (int m = 1; m <= size && workable.size() < 40; ++m) {
        if (size % m == 0) workable += (workable.empty() ? "" : ", ") + std::to_string(m);
      }
      throw ConfigError("batch size " + std::to_string(size) + " (input " + std::to_string(i) +
                        ", dimension " + std::to_string(dim) + ") does not split into " +
                        std::to_string(microbatches) +
                        " equal microbatches; uneven microbatches would change the shapes the "
                        "stages agreed on. Use a batch size divisible by " +
                        std::to_string(microbatches) + ", or microbatches among: " + workable);
    }
    const auto parts = tensor.chunk(microbatches, dim);
    for (int m = 0; m < microbatches; ++m) chunks[static_cast<std::size_t>(m)].push_back(parts[m]);
  }
  return chunks;
}

at::Tensor merge_microbatches(const std::vector<at::Tensor>& chunks, int dim) {
  return at::cat(chunks, dim);
}

}  // namespace baton
