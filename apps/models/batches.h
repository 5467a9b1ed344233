// Where batches come from (the `data` section). Every rank computes the same rows for a step from
// the seed (cheap), so the first stage has its inputs and the last stage its targets without any
// communication; with data parallelism each replica makes only its own rows, and a rank makes
// them a microbatch at a time (batch_prefetcher.h): a row depends on the step and its place in
// the global batch alone, never on how the batch is cut.
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
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // Rows [first, first + count) of the replica's part of training step `step`'s global batch
  // (steps count from 1), the same on every rank of the replica.
  virtual Batch rows(int step, std::int64_t first, std::int64_t count) const = 0;
  // How many rows of every step's batch the replica trains on.
  virtual std::int64_t rows_per_step() const = 0;
  // The rows a file source holds (each step's rows wrap around them); 0 for a source that
  // draws its rows (synthetic, text).
  virtual std::int64_t rows_held() const { return 0; }
  // The replica's whole batch of `step`.
  Batch batch(int step) const { return rows(step, 0, rows_per_step()); }
};

// From the `data` section (read_data_settings()). `data_dir` holds the shipped text
// (configs/data). Learns from a sample of the data what the model's output is (fills in
// `model`'s targets: output_probe.h) and refuses targets that do not fit it, naming the file.
std::unique_ptr<BatchSource> make_batch_source(const DataSettings& data, BuiltModel& model,
                                               const std::string& data_dir, ReplicaRows rows = {});

}  // namespace baton_models
