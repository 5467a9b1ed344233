#include "batches.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "baton/error.h"
#include "output_probe.h"
#include "step_seed.h"
#include "tensor_files.h"
#include "token_stream.h"

namespace baton_models {
namespace {

std::vector<std::int64_t> with_rows(std::int64_t rows, const std::vector<std::int64_t>& sample) {
  std::vector<std::int64_t> shape{rows};
  shape.insert(shape.end(), sample.begin(), sample.end());
  return shape;
}

std::vector<at::Tensor> first_rows(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> rows;
  for (const at::Tensor& tensor : tensors) rows.push_back(tensor.slice(0, 0, 1));
  return rows;
}

// Random rows: each row's inputs (in the order of the model's arguments) and then its target,
// drawn by the row's own generator, different every step, identical on every rank (the rule is
// in docs/configuration.md).
class SyntheticBatches : public BatchSource {
 public:
  SyntheticBatches(const BuiltModel& model, std::int64_t batch_size, std::uint64_t seed,
                   ReplicaRows rows)
      : rows_(rows),
        inputs_(model.inputs),
        value_targets_(model.value_targets),
        target_shape_(model.value_targets ? model.value_target_shape : model.target_shape),
        num_classes_(model.num_classes),
        batch_size_(batch_size),
        seed_(seed) {}

  std::int64_t rows_per_step() const override { return batch_size_ / rows_.replicas; }

  Batch rows(int step, std::int64_t first, std::int64_t count) const override {
    return draw(step, first, count, true);
  }

  // Without targets: the sample a model's output is learned from, before their shape is known.
  Batch draw(int step, std::int64_t first, std::int64_t count, bool with_targets) const {
    // Drawn in place, row by row: each row's draw is the one randn / randint of the row's
    // shape would make (the same kernel on the same contiguous memory).
    std::vector<at::Tensor> inputs;
    for (const InputSpec& input : inputs_) {
      inputs.push_back(at::empty(
          with_rows(count, input.shape),
          at::TensorOptions().dtype(at::isFloatingType(input.dtype) ? input.dtype : at::kLong)));
    }
    at::Tensor targets;
    if (with_targets) {
      targets = at::empty(with_rows(count, target_shape_),
                          at::TensorOptions().dtype(value_targets_ ? at::kFloat : at::kLong));
    }
    const std::int64_t global_first = rows_.first(batch_size_) + first;
    for (std::int64_t i = 0; i < count; ++i) {
      at::Generator generator =
          at::detail::createCPUGenerator(row_seed(seed_, step, global_first + i));
      for (std::size_t j = 0; j < inputs_.size(); ++j) {
        const InputSpec& input = inputs_[j];
        at::Tensor row = inputs[j].select(0, i);
        if (at::isFloatingType(input.dtype)) {
          row.normal_(0, 1, generator);
        } else {
          row.random_(0, input.dtype == at::kBool ? 2 : input.high, generator);
        }
      }
      if (!with_targets) continue;
      at::Tensor target = targets.select(0, i);
      if (value_targets_) {
        target.normal_(0, 1, generator);
      } else {
        target.random_(0, num_classes_, generator);
      }
    }
    for (std::size_t j = 0; j < inputs_.size(); ++j) {
      if (!at::isFloatingType(inputs_[j].dtype)) inputs[j] = inputs[j].to(inputs_[j].dtype);
    }
    return Batch{std::move(inputs), std::move(targets)};
  }

 private:
  ReplicaRows rows_;
  std::vector<InputSpec> inputs_;
  bool value_targets_;
  std::vector<std::int64_t> target_shape_;
  std::int64_t num_classes_;
  std::int64_t batch_size_;
  std::uint64_t seed_;
};

// Windows of a token stream (a text read as bytes): inputs are seq_len tokens, targets the
// same window shifted by one. Each row's window starts at an offset its own generator draws; a
// replica reads only its own rows' windows from the mapped file.
class TextBatches : public BatchSource {
 public:
  TextBatches(std::shared_ptr<const TokenStream> tokens, std::int64_t batch_size,
              std::int64_t seq_len, at::ScalarType dtype, std::int64_t id_limit, std::uint64_t seed,
              ReplicaRows rows)
      : tokens_(std::move(tokens)),
        batch_size_(batch_size),
        seq_len_(seq_len),
        dtype_(dtype),
        id_limit_(id_limit),
        seed_(seed),
        rows_(rows) {}

  std::int64_t rows_per_step() const override { return batch_size_ / rows_.replicas; }

  Batch rows(int step, std::int64_t first, std::int64_t count) const override {
    const std::int64_t limit = tokens_->size() - seq_len_ - 1;
    std::vector<at::Tensor> inputs, targets;
    const std::int64_t global_first = rows_.first(batch_size_) + first;
    for (std::int64_t i = global_first; i < global_first + count; ++i) {
      at::Generator generator = at::detail::createCPUGenerator(row_seed(seed_, step, i));
      const std::int64_t start =
          at::randint(limit + 1, {1}, generator, at::kLong).item<std::int64_t>();
      const at::Tensor window = tokens_->window(start, seq_len_ + 1);
      check_ids(window, start, step);
      inputs.push_back(window.slice(0, 0, seq_len_));
      targets.push_back(window.slice(0, 1, seq_len_ + 1));
    }
    return Batch{{at::stack(inputs).to(dtype_)}, at::stack(targets)};
  }

 private:
  // A large file is not scanned at set-up (that would read all of it): each window is.
  void check_ids(const at::Tensor& window, std::int64_t start, int step) const {
    const std::int64_t low = window.min().item<std::int64_t>();
    const std::int64_t high = window.max().item<std::int64_t>();
    if (low >= 0 && high < id_limit_) return;
    throw baton::ConfigError("data.tokens ('" + tokens_->path() + "'): the window at token " +
                             std::to_string(start) + " (step " + std::to_string(step) +
                             ") holds id " + std::to_string(low < 0 ? low : high) +
                             "; the model takes ids 0 to " + std::to_string(id_limit_ - 1));
  }

  std::shared_ptr<const TokenStream> tokens_;
  std::int64_t batch_size_, seq_len_;
  at::ScalarType dtype_;
  std::int64_t id_limit_;
  std::uint64_t seed_;
  ReplicaRows rows_;
};

// Consecutive rows of tensors read from files (wrapping around), the same on every rank; a
// replica selects only its own.
class FileBatches : public BatchSource {
 public:
  FileBatches(std::vector<at::Tensor> inputs, at::Tensor targets, std::int64_t batch_size,
              ReplicaRows rows)
      : inputs_(std::move(inputs)),
        targets_(std::move(targets)),
        batch_size_(batch_size),
        rows_(rows) {}

  std::int64_t rows_per_step() const override { return batch_size_ / rows_.replicas; }
  std::int64_t rows_held() const override { return targets_.size(0); }

  Batch rows(int step, std::int64_t first, std::int64_t count) const override {
    const std::int64_t global_first = rows_.first(batch_size_) + first;
    const at::Tensor index =
        (at::arange(global_first, global_first + count, at::kLong) + (step - 1) * batch_size_)
            .remainder(targets_.size(0));
    Batch batch;
    for (const at::Tensor& input : inputs_) batch.inputs.push_back(input.index_select(0, index));
    batch.targets = targets_.index_select(0, index);
    return batch;
  }

 private:
  std::vector<at::Tensor> inputs_;
  at::Tensor targets_;
  std::int64_t batch_size_;
  ReplicaRows rows_;
};

std::unique_ptr<BatchSource> synthetic_batches(const DataSettings& data, BuiltModel& model,
                                               ReplicaRows rows) {
  const std::string where = data.source.where() + ": data.source 'synthetic': ";
  if (model.inputs.empty()) {
    throw baton::ConfigError(where +
                             "random data needs the shapes and dtypes of the model's "
                             "inputs; set model.params.inputs, e.g. [\"int64[32]<256\"] "
                             "for 32 token ids below 256, or [\"float32[64]\"]");
  }
  for (std::size_t i = 0; i < model.inputs.size(); ++i) {
    InputSpec& input = model.inputs[i];
    if (at::isFloatingType(input.dtype) || input.dtype == at::kBool || input.high > 0) continue;
    if (model.num_classes <= 0) {
      throw baton::ConfigError(where + "input " + std::to_string(i + 1) +
                               " is integer: give the bound of its random values in "
                               "model.params.inputs, e.g. \"int64[32]<256\" (or set "
                               "model.params.num_classes, used as the bound)");
    }
    input.high = model.num_classes;
  }
  // The sample the output is learned from is step 1's first row of the global batch, the same
  // on every rank of every replica (its target is not drawn: its shape is not known yet).
  const SyntheticBatches probe(model, data.batch_size, data.seed, ReplicaRows{});
  learn_output_from_sample(&model, probe.draw(1, 0, 1, false).inputs, "synthetic inputs");
  return std::make_unique<SyntheticBatches>(model, data.batch_size, data.seed, rows);
}

// Class-id targets must be integers shaped like the output without its last dimension, in
// [0, classes); value targets hold one value per output element.
void check_targets(const at::Tensor& targets, const BuiltModel& model, const std::string& file,
                   const baton::Setting<std::string>& setting) {
  const std::string where = setting.where() + ": data.targets ('" + file + "'): ";
  const auto rows = targets.size(0);
  if (model.value_targets) {
    std::int64_t per_sample = 1;
    for (const std::int64_t extent : model.value_target_shape) per_sample *= extent;
    if (targets.numel() != rows * per_sample) {
      throw baton::ConfigError(where + "holds " + shape_text(targets.sizes()) +
                               "; the loss compares them with the model's output, " +
                               shape_text(with_rows(rows, model.value_target_shape)) +
                               " (values, one per output element); if they are class ids, save "
                               "them as integers (a scripted loss then receives them as they are)");
    }
    return;
  }
  if (at::isFloatingType(targets.scalar_type()) || targets.scalar_type() == at::kBool) {
    throw baton::ConfigError(
        where + "holds " + baton_models::describe_tensors({targets}) +
        " values; the loss takes class ids (integers: cross entropy, or model.targets: classes). "
        "Save them as integers "
        "(numpy: targets.astype('int64')), or use model.loss: mse for value targets");
  }
  const auto wanted = with_rows(rows, model.target_shape);
  if (targets.sizes() != at::IntArrayRef(wanted) && model.loss_from_model) {
    throw baton::ConfigError(where + "holds " + shape_text(targets.sizes()) +
                             " but the model's own loss takes targets of " + shape_text(wanted) +
                             " (one sample " + shape_text(model.target_shape) +
                             ", as baton-split traced its forward with them); give targets of "
                             "that shape, or split again with example_inputs() of yours");
  }
  if (targets.sizes() != at::IntArrayRef(wanted)) {
    throw baton::ConfigError(
        where + "holds " + shape_text(targets.sizes()) + " but the model's output per batch is " +
        shape_text(with_rows(rows,
                             [&] {
                               auto shape = model.target_shape;
                               shape.push_back(model.num_classes);
                               return shape;
                             }())) +
        ", so class-id targets are " + shape_text(wanted) +
        ": one class id per output position (the output without its last dimension)");
  }
  // Padding (model.ignore_index) is no class id; the loss skips it.
  const at::Tensor ids = targets.masked_select(targets.ne(model.ignore_index));
  const std::int64_t low = ids.numel() ? ids.min().item<std::int64_t>() : 0;
  const std::int64_t high = ids.numel() ? ids.max().item<std::int64_t>() : 0;
  if (low < 0 || high >= model.num_classes) {
    throw baton::ConfigError(
        where + "holds class ids from " + std::to_string(low) + " to " + std::to_string(high) +
        " but the model scores " + std::to_string(model.num_classes) + " classes (ids 0 to " +
        std::to_string(model.num_classes - 1) + "), with " + std::to_string(model.ignore_index) +
        " for padding (model.ignore_index); the targets belong to another model, the output is "
        "too narrow, or the padding value is not model.ignore_index");
  }
}

at::ScalarType data_dtype_for(const BuiltModel& model, std::size_t input, at::ScalarType given) {
  if (model.keeps_data_dtype) return given;
  const at::ScalarType wanted = model.inputs.at(input).dtype;
  return at::isFloatingType(wanted) ? wanted : at::kLong;
}

std::unique_ptr<BatchSource> file_batches(const DataSettings& data, BuiltModel& model,
                                          ReplicaRows rows) {
  const std::vector<std::string>& files = data.inputs.value;
  const std::string& targets_file = data.targets.value;
  if (files.empty() || targets_file.empty()) {
    throw baton::ConfigError(data.source.where() +
                             ": data.source 'files' needs data.inputs and data.targets (.npy "
                             "or .pt files, one row per sample)");
  }
  const std::string inputs_at = data.inputs.where() + ": data.inputs: ";
  if (!model.inputs.empty() && files.size() != model.inputs.size()) {
    throw baton::ConfigError(inputs_at + std::to_string(files.size()) + " file" +
                             (files.size() == 1 ? "" : "s") + " for a model that takes " +
                             std::to_string(model.inputs.size()) + " input" +
                             (model.inputs.size() == 1 ? "" : "s") +
                             "; give one file per argument of its forward, in order");
  }
  // Read in the order they are configured: a missing file is named as the user lists them.
  std::vector<at::Tensor> read;
  for (const std::string& path : files) read.push_back(read_tensor_file(path, "data.inputs"));
  at::Tensor targets = read_tensor_file(targets_file, "data.targets");
  if (targets.dim() == 0) {
    throw baton::ConfigError(data.targets.where() + ": data.targets ('" + targets_file +
                             "') holds a single value; give one row per sample");
  }
  std::vector<at::Tensor> inputs;
  for (std::size_t i = 0; i < files.size(); ++i) {
    at::Tensor input = read[i];
    const std::string which = inputs_at + "'" + files[i] + "' ";
    if (input.dim() == 0 || input.size(0) != targets.size(0)) {
      throw baton::ConfigError(which + "has " + std::to_string(input.dim() ? input.size(0) : 0) +
                               " samples but data.targets has " + std::to_string(targets.size(0)) +
                               "; every file needs one row per sample");
    }
    if (input.size(0) < data.batch_size) {
      throw baton::ConfigError(which + "holds " + std::to_string(input.size(0)) +
                               " samples, fewer than data.batch_size " +
                               std::to_string(data.batch_size));
    }
    if (model.keeps_data_dtype && !model.inputs.empty()) {
      const InputSpec& declared = model.inputs[i];
      const auto wanted = with_rows(input.size(0), declared.shape);
      if (input.sizes() != at::IntArrayRef(wanted) || input.scalar_type() != declared.dtype) {
        throw baton::ConfigError(
            which + "holds " + describe_tensors({input}) +
            " but model.params.inputs declares input " + std::to_string(i + 1) + " as " +
            describe_tensors({at::empty(wanted, at::TensorOptions().dtype(declared.dtype))}) +
            "; make them agree (or leave model.params.inputs out with "
            "data files: the files say what the inputs are)");
      }
    }
    if (at::isFloatingType(input.scalar_type())) {
      const at::Tensor bad_rows =
          (~at::isfinite(input)).reshape({input.size(0), -1}).any(1).nonzero();
      if (bad_rows.numel() > 0) {
        throw baton::ConfigError(which + "holds non-finite values (nan or inf), first in row " +
                                 std::to_string(bad_rows[0][0].item<std::int64_t>()) +
                                 "; the loss would be nan from the first step");
      }
    }
    // A user's model takes the data as it is; a built-in one in its own dtype.
    inputs.push_back(input.to(data_dtype_for(model, i, input.scalar_type())).contiguous());
  }
  // A scripted loss following the data: integer targets are class ids, float ones values.
  if (model.targets_follow_data) {
    model.value_targets =
        at::isFloatingType(targets.scalar_type()) || targets.scalar_type() == at::kBool;
  }
  learn_output_from_sample(&model, first_rows(inputs), "data.inputs");
  check_targets(targets, model, targets_file, data.targets);
  if (!model.value_targets) targets = targets.to(at::kLong);
  return std::make_unique<FileBatches>(std::move(inputs), targets.contiguous(), data.batch_size,
                                       rows);
}

// Files up to this size are scanned for their id range at set-up (a clear error before
// anything starts); larger ones are mapped and only each window read is checked.
constexpr std::int64_t kScannedTokenBytes = std::int64_t{64} << 20;

std::unique_ptr<BatchSource> text_batches(const DataSettings& data, BuiltModel& model,
                                          const std::string& data_dir, ReplicaRows rows) {
  const std::string where = data.source.where() + ": data.source 'text': ";
  if (model.inputs.size() != 1 || model.inputs[0].shape.size() != 1 ||
      at::isFloatingType(model.inputs[0].dtype) || model.inputs[0].dtype == at::kBool) {
    throw baton::ConfigError(where +
                             "token windows feed a model that takes one integer input "
                             "[batch, seq]; declare it (model.params.inputs: "
                             "[\"int64[SEQ]\"], SEQ the context length), or use "
                             "data.source: files for other inputs");
  }
  const InputSpec& input = model.inputs[0];
  const baton::Setting<std::string>& path = data.tokens;
  const std::string file = path.value.empty() ? data_dir + "/declaration.txt" : path.value;
  const auto tokens = TokenStream::open(file, data.token_format.value, "data.tokens");
  const std::int64_t seq_len = input.shape[0];
  const std::string at = path.where() + ": data.tokens ('" + file + "'): ";
  if (tokens->size() < seq_len + 2) {
    throw baton::ConfigError(at + "holds " + std::to_string(tokens->size()) +
                             " tokens, fewer than one window of " + std::to_string(seq_len + 1));
  }
  const bool scanned = tokens->file_bytes() <= kScannedTokenBytes;
  const auto [low, high] =
      scanned ? tokens->id_range() : std::pair<std::int64_t, std::int64_t>{0, 0};
  if (low < 0) {
    throw baton::ConfigError(at + "holds a negative token id (" + std::to_string(low) + ")");
  }
  if (input.high > 0 && high >= input.high) {
    throw baton::ConfigError(at + "token ids reach " + std::to_string(high) +
                             " but the model takes ids below " + std::to_string(input.high) +
                             " (model.params.vocab_size for gpt, the <HIGH of "
                             "model.params.inputs otherwise)");
  }
  // A text's targets are its next tokens: class ids, for a scripted loss following the data.
  if (model.targets_follow_data) model.value_targets = false;
  learn_output_from_sample(&model, {tokens->window(0, seq_len).unsqueeze(0).to(input.dtype)},
                           "data.tokens");
  std::int64_t id_limit = input.high > 0 ? input.high : std::numeric_limits<std::int64_t>::max();
  if (!model.value_targets) {
    if (model.target_shape != std::vector<std::int64_t>{seq_len}) {
      throw baton::ConfigError(
          where + "the targets are the next token of every position, [batch, " +
          std::to_string(seq_len) + "], but the model's output per sample is " +
          shape_text(model.target_shape) + " + classes; a language model's output is [batch, " +
          std::to_string(seq_len) + ", vocab]");
    }
    if (high >= model.num_classes) {
      throw baton::ConfigError(at + "token ids reach " + std::to_string(high) +
                               " but the model scores " + std::to_string(model.num_classes) +
                               " classes per position; its output must cover the vocabulary");
    }
    id_limit = std::min(id_limit, model.num_classes);
  }
  return std::make_unique<TextBatches>(tokens, data.batch_size, seq_len, input.dtype, id_limit,
                                       data.seed, rows);
}

}  // namespace

std::unique_ptr<BatchSource> make_batch_source(const DataSettings& data, BuiltModel& model,
                                               const std::string& data_dir, ReplicaRows rows) {
  switch (data.source.value) {
    case DataSource::kSynthetic:
      return synthetic_batches(data, model, rows);
    case DataSource::kText:
      return text_batches(data, model, data_dir, rows);
    case DataSource::kFiles:
      return file_batches(data, model, rows);
  }
  throw baton::Error("data.source: a source without batches");
}

}  // namespace baton_models
