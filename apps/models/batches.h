// Where batches come from (the `data` section). Every rank computes the same batch for a step from
// the seed (cheap), so the first stage has its inputs and the last stage its targets without any
// communication.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model_settings.h"
#include "models.h"

namespace baton_models {

struct Batch {
  std::vector<at::Tensor> inputs;
  at::Tensor targets;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // The batch of training step `step` (1-based); the same on every rank.
  virtual Batch batch(int step) const = 0;
};

// From the `data` section (read_data_settings()). `data_dir` holds the shipped text
// (configs/data). Learns from a sample of the data what the model's output is (fills in
// `model`'s targets: output_probe.h) and refuses targets that do not fit it, naming the file.
std::unique_ptr<BatchSource> make_batch_source(const DataSettings& data, BuiltModel& model,
                                               const std::string& data_dir);

}  // namespace baton_models
