// Where batches come from (the `data` section). Every rank computes the same batch for a step from
// the seed (cheap), so the first stage has its inputs and the last stage its targets without any
// communication; with data parallelism each replica makes only its own rows.
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

// The rows of every step's global batch one data-parallel replica trains on: replica r of D
// takes rows [r x B/D, (r + 1) x B/D) (the configuration checked that D divides B).
struct ReplicaRows {
  int replica = 0;
  int replicas = 1;
  std::int64_t first(std::int64_t batch_size) const { return replica * (batch_size / replicas); }
  std::int64_t end(std::int64_t batch_size) const {
    return first(batch_size) + batch_size / replicas;
  }
  at::Tensor of(const at::Tensor& global) const {
    return replicas == 1 ? global
                         : global.narrow(0, first(global.size(0)), global.size(0) / replicas);
  }
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // The batch of training step `step` (1-based): the replica's rows of the global batch,
  // the same on every rank of the replica.
  virtual Batch batch(int step) const = 0;
};

// From the `data` section (read_data_settings()). `data_dir` holds the shipped text
// (configs/data). Learns from a sample of the data what the model's output is (fills in
// `model`'s targets: output_probe.h) and refuses targets that do not fit it, naming the file.
std::unique_ptr<BatchSource> make_batch_source(const DataSettings& data, BuiltModel& model,
                                               const std::string& data_dir, ReplicaRows rows = {});

}  // namespace baton_models
