#include "batches.h"

#include <ATen/ATen.h>

#include <fstream>
#include <sstream>

#include "baton/error.h"
#include "step_seed.h"
#include "tensor_files.h"

namespace baton_models {
namespace {

// Random inputs and class targets, different every step, identical on every rank.
class SyntheticBatches : public BatchSource {
 public:
  SyntheticBatches(const BuiltModel& model, std::int64_t batch_size, std::uint64_t seed)
      : model_(model), batch_size_(batch_size), seed_(seed) {}

  Batch batch(int step) const override {
    at::Generator generator = at::detail::createCPUGenerator(step_seed(seed_, step));
    std::vector<std::int64_t> input_shape{batch_size_};
    input_shape.insert(input_shape.end(), model_.sample_shape.begin(), model_.sample_shape.end());
    std::vector<std::int64_t> target_shape{batch_size_};
    target_shape.insert(target_shape.end(), model_.target_shape.begin(), model_.target_shape.end());
    Batch batch;
    if (at::isFloatingType(model_.input_dtype)) {
      batch.inputs.push_back(
          at::randn(input_shape, generator, at::TensorOptions().dtype(model_.input_dtype)));
    } else {
      batch.inputs.push_back(at::randint(model_.input_range, input_shape, generator, at::kLong));
    }
    if (model_.value_targets) {
      target_shape.assign(1, batch_size_);
      target_shape.insert(target_shape.end(), model_.value_target_shape.begin(),
                          model_.value_target_shape.end());
      batch.targets = at::randn(target_shape, generator, at::kFloat);
    } else {
      batch.targets = at::randint(model_.num_classes, target_shape, generator, at::kLong);
    }
    return batch;
  }

 private:
  BuiltModel model_;
  std::int64_t batch_size_;
  std::uint64_t seed_;
};

// Windows of a token stream (a text read as bytes): inputs are seq_len tokens, targets the
// same window shifted by one. Windows are drawn at seeded random offsets.
class TextBatches : public BatchSource {
 public:
  TextBatches(at::Tensor tokens, std::int64_t batch_size, std::int64_t seq_len, std::uint64_t seed)
      : tokens_(std::move(tokens)), batch_size_(batch_size), seq_len_(seq_len), seed_(seed) {}

  Batch batch(int step) const override {
    at::Generator generator = at::detail::createCPUGenerator(step_seed(seed_, step));
    const std::int64_t limit = tokens_.size(0) - seq_len_ - 1;
    const at::Tensor starts = at::randint(limit + 1, {batch_size_}, generator, at::kLong);
    std::vector<at::Tensor> inputs, targets;
    for (std::int64_t i = 0; i < batch_size_; ++i) {
      const std::int64_t start = starts[i].item<std::int64_t>();
      inputs.push_back(tokens_.slice(0, start, start + seq_len_));
      targets.push_back(tokens_.slice(0, start + 1, start + seq_len_ + 1));
    }
    return Batch{{at::stack(inputs)}, at::stack(targets)};
  }

 private:
  at::Tensor tokens_;
  std::int64_t batch_size_, seq_len_;
  std::uint64_t seed_;
};

// Consecutive rows of tensors read from files (wrapping around), the same on every rank.
class FileBatches : public BatchSource {
 public:
  FileBatches(at::Tensor inputs, at::Tensor targets, std::int64_t batch_size)
      : inputs_(std::move(inputs)), targets_(std::move(targets)), batch_size_(batch_size) {}

  Batch batch(int step) const override {
    const std::int64_t rows = inputs_.size(0);
    const at::Tensor index =
        (at::arange(batch_size_, at::kLong) + (step - 1) * batch_size_).remainder(rows);
    return Batch{{inputs_.index_select(0, index)}, targets_.index_select(0, index)};
  }

 private:
  at::Tensor inputs_, targets_;
  std::int64_t batch_size_;
};

}  // namespace

std::unique_ptr<BatchSource> make_batch_source(const DataSettings& data, const BuiltModel& model,
                                               const std::string& data_dir) {
  const std::int64_t batch_size = data.batch_size;
  const std::uint64_t seed = data.seed;
  const baton::ParamValue& source = data.source;
  if (source.as_string() == "synthetic") {
    return std::make_unique<SyntheticBatches>(model, batch_size, seed);
  }
  if (source.as_string() == "text") {
    if (model.input_dtype != at::kLong || model.sample_shape.size() != 1) {
      throw baton::ConfigError(source.origin().description +
                               ": data.source 'text' feeds token windows, which only a language "
                               "model (model.name: gpt) takes; use data.source: synthetic");
    }
    const baton::ParamValue& path = data.tokens;
    const std::string file =
        path.as_string().empty() ? data_dir + "/declaration.txt" : path.as_string();
    at::Tensor tokens = read_token_file(file, data.token_format.as_string(), "data.tokens");
    const std::int64_t seq_len = model.sample_shape[0];
    if (tokens.size(0) < seq_len + 2) {
      throw baton::ConfigError(path.origin().description + ": data.tokens: '" + file + "' holds " +
                               std::to_string(tokens.size(0)) +
                               " tokens, fewer than one window of " + std::to_string(seq_len + 1));
    }
    if (tokens.min().item<std::int64_t>() < 0) {
      throw baton::ConfigError(path.origin().description + ": data.tokens: '" + file +
                               "' holds a negative token id (" +
                               std::to_string(tokens.min().item<std::int64_t>()) +
                               "); token ids are 0 to model.params.vocab_size - 1");
    }
    if (tokens.max().item<std::int64_t>() >= model.input_range) {
      throw baton::ConfigError(path.origin().description + ": data.tokens: token ids reach " +
                               std::to_string(tokens.max().item<std::int64_t>()) +
                               " but model.params.vocab_size is " +
                               std::to_string(model.input_range));
    }
    return std::make_unique<TextBatches>(tokens, batch_size, seq_len, seed);
  }
  if (source.as_string() == "files") {
    const baton::ParamValue& inputs_path = data.inputs;
    const baton::ParamValue& targets_path = data.targets;
    if (inputs_path.as_string().empty() || targets_path.as_string().empty()) {
      throw baton::ConfigError(source.origin().description +
                               ": data.source 'files' needs data.inputs and data.targets (.npy "
                               "or .pt files, one row per sample)");
    }
    at::Tensor inputs = read_tensor_file(inputs_path.as_string(), "data.inputs");
    at::Tensor targets = read_tensor_file(targets_path.as_string(), "data.targets");
    if (inputs.dim() == 0 || targets.dim() == 0 || inputs.size(0) != targets.size(0)) {
      throw baton::ConfigError(
          inputs_path.origin().description + ": data.inputs has " +
          std::to_string(inputs.dim() ? inputs.size(0) : 0) + " samples but data.targets has " +
          std::to_string(targets.dim() ? targets.size(0) : 0) + "; both need one row per sample");
    }
    if (inputs.size(0) < batch_size) {
      throw baton::ConfigError(inputs_path.origin().description + ": data.inputs holds " +
                               std::to_string(inputs.size(0)) + " samples, fewer than " +
                               "data.batch_size " + std::to_string(batch_size));
    }
    // What the model takes: floating inputs as its dtype, integer ones (tokens) as int64;
    // class targets as int64, value targets (mse, a scripted loss) as they are.
    inputs =
        at::isFloatingType(model.input_dtype) ? inputs.to(model.input_dtype) : inputs.to(at::kLong);
    if (!model.value_targets) targets = targets.to(at::kLong);
    return std::make_unique<FileBatches>(inputs.contiguous(), targets.contiguous(), batch_size);
  }
  throw baton::ConfigError(source.origin().description + ": data.source '" + source.as_string() +
                           "' is unknown (synthetic, files or text)");
}

}  // namespace baton_models
