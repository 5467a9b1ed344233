#include "checkpoint.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/log.h"
#include "baton/store_keys.h"
#include "baton/tensor_meta.h"
#include "checkpoint_manifest.h"
#include "checksum.h"
#include "host_copy.h"
#include "optimizer_state.h"
#include "owned_outputs.h"
#include "store_count.h"

namespace baton_app {
namespace {

namespace fs = std::filesystem;

std::string step_folder(const std::string& dir, int step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%06d", step);
  return dir + "/" + name;
}

// What a checkpoint of `world_size` ranks holds beside its manifest, in the manifest's order.
std::vector<std::string> checkpoint_file_names(long world_size) {
  std::vector<std::string> names;
  for (int r = 0; r < world_size; ++r) {
    names.push_back(rank_file_name(r, ".pt"));
    names.push_back(rank_file_name(r, ".optim"));
  }
  return names;
}

std::string describe_entry(const at::Tensor& tensor) {
  std::string text = baton::dtype_name(tensor.scalar_type()) + "[";
  for (std::int64_t d = 0; d < tensor.dim(); ++d) {
    text += (d ? ", " : "") + std::to_string(tensor.size(d));
  }
  return text + "]";
}

// The file's size and checksum against what the manifest recorded for it.
// The size is compared first: a file swapped for a huge (or sparse) one is refused unread.
void verify_file(const std::string& path, const FileRecord& recorded) {
  const baton::ReadableFile file = baton::ReadableFile::open(path, "checkpoint file");
  if (static_cast<std::int64_t>(file.size()) != recorded.bytes) {
    throw baton::ConfigError("checkpoint file '" + path + "' has " + std::to_string(file.size()) +
                             " bytes, the manifest says " + std::to_string(recorded.bytes) +
                             " (truncated, or replaced by another file)");
  }
  const std::string bytes = file.read_all(file.size());
  const std::string checksum = checksum_text(bytes);
  if (checksum != recorded.checksum) {
    throw baton::ConfigError("checkpoint file '" + path + "' has checksum " + checksum +
                             ", the manifest says " + recorded.checksum +
                             " (damaged, or replaced by another step's or run's file)");
  }
}

// Every PyTorch archive (torch.save, pickle_save, an optimizer's archive) is a zip file,
// which ends with an end-of-central-directory record: a file cut short or overwritten with
// other bytes has none.
bool looks_like_whole_archive(const std::string& path) {
  try {
    const baton::ReadableFile file = baton::ReadableFile::open(path, "checkpoint file");
    if (file.size() < 22) return false;
    const std::uint64_t tail = std::min<std::uint64_t>(file.size(), 65536 + 22);
    std::string bytes(static_cast<std::size_t>(tail), '\0');
    file.read_at(file.size() - tail, bytes.data(), bytes.size());
    return bytes.rfind(std::string("PK\x05\x06", 4)) != std::string::npos;
  } catch (const baton::Error&) {
    return false;
  }
}

// A tensor archive read back, or a ConfigError naming the file instead of LibTorch's
// "PytorchStreamReader failed ..." with a stack.
c10::IValue load_archive(const std::string& path) {
  const std::string bytes = baton::read_file(path, "checkpoint file");
  try {
    return torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const c10::Error& error) {
    throw baton::ConfigError("checkpoint file '" + path + "' cannot be read (" +
                             error.what_without_backtrace() +
                             "); remove that checkpoint folder to use the one before it");
  }
}

}  // namespace

c10::Dict<c10::IValue, c10::IValue> load_checkpoint_parameters(const std::string& path) {
  const c10::IValue value = load_archive(path);
  if (!value.isGenericDict()) {
    throw baton::ConfigError("checkpoint file '" + path + "' holds a " + value.tagKind() +
                             ", not baton's dict of parameters");
  }
  return value.toGenericDict();
}

std::string schedule_choice_in(const std::string& folder) {
  const std::string path = folder + "/manifest.json";
  const nlohmann::json manifest =
      nlohmann::json::parse(baton::read_file(path, "checkpoint manifest"), nullptr, false);
  const auto found = manifest.is_object() ? manifest.find("schedule_choice") : manifest.end();
  if (manifest.is_object() && found != manifest.end() && found->is_object()) {
    return found->dump(2) + "\n";
  }
  return "";
}

int verify_checkpoint(const std::string& folder) {
  const Manifest manifest = read_manifest(folder + "/manifest.json");
  // The folder's name and the manifest's step are written together: a step edited in one
  // would resume at the wrong step (skipping, or repeating, training).
  const std::string name = fs::path(folder).filename().string();
  const long named_step = checkpoint_step_of(name);
  if (named_step >= 0 && named_step != manifest.step) {
    throw baton::ConfigError("checkpoint manifest '" + folder + "/manifest.json' says step " +
                             std::to_string(manifest.step) + ", its folder is " + name +
                             " (edited, or moved from another folder?)");
  }
  const std::vector<std::string> expected = checkpoint_file_names(manifest.world_size);
  if (manifest.files != expected) {
    throw baton::ConfigError("checkpoint manifest '" + folder +
                             "/manifest.json' lists other files than " +
                             std::to_string(manifest.world_size) + " ranks write (damaged?)");
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::string& file = expected[i];
    const std::string path = folder + "/" + file;
    if (!fs::exists(path)) {
      throw baton::ConfigError("checkpoint '" + folder + "' was written by " +
                               std::to_string(manifest.world_size) + " ranks, but " + file +
                               " is missing: the checkpoint is incomplete");
    }
    if (manifest.format == 2) {
      const RankRecord& record = manifest.ranks[i / 2];
      const auto recorded = record.files.find(file);
      if (recorded == record.files.end()) {
        throw baton::ConfigError("checkpoint manifest '" + folder + "/manifest.json' has no " +
                                 "size and checksum for " + file + " (damaged?)");
      }
      verify_file(path, recorded->second);
    } else if (!looks_like_whole_archive(path)) {
      throw baton::ConfigError("checkpoint file '" + path +
                               "' is truncated or not a PyTorch archive (no zip directory at "
                               "its end)");
    }
  }
  return static_cast<int>(manifest.world_size);
}

void verify_rank_entries(const std::string& folder, int rank,
                         const c10::Dict<c10::IValue, c10::IValue>& dict) {
  const Manifest manifest = read_manifest(folder + "/manifest.json");
  if (manifest.format != 2) return;  // earlier checkpoints recorded no entries
  const std::string path = rank_file(folder, rank, ".pt");
  const auto& recorded = manifest.ranks.at(static_cast<std::size_t>(rank)).entries;
  std::size_t found = 0;
  for (const auto& item : dict) {
    if (!item.key().isString() || !item.value().isTensor()) {
      throw baton::ConfigError("checkpoint file '" + path +
                               "' holds an entry that is not a "
                               "named tensor");
    }
    const std::string& name = item.key().toStringRef();
    const auto wanted = recorded.find(name);
    const std::string actual = describe_entry(item.value().toTensor());
    if (wanted == recorded.end() || wanted->second != actual) {
      throw baton::ConfigError(
          "checkpoint file '" + path + "': " + name + " is " + actual + ", the manifest " +
          (wanted == recorded.end() ? std::string("does not list it") : "says " + wanted->second));
    }
    ++found;
  }
  if (found != recorded.size()) {
    throw baton::ConfigError("checkpoint file '" + path + "' holds " + std::to_string(found) +
                             " entries, the manifest lists " + std::to_string(recorded.size()));
  }
}

long checkpoint_step_of(const std::string& folder_name) {
  if (folder_name.rfind("step-", 0) != 0) return -1;
  char* end = nullptr;
  const long step = std::strtol(folder_name.c_str() + 5, &end, 10);
  return end != folder_name.c_str() + 5 && *end == '\0' && step >= 0 ? step : -1;
}

std::vector<std::string> checkpoint_folders(const std::string& dir) {
  std::error_code error;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (checkpoint_step_of(name) >= 0 && entry.is_directory(error)) names.push_back(name);
  }
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return checkpoint_step_of(a) < checkpoint_step_of(b);
  });
  return names;
}

std::string latest_checkpoint(const std::string& dir) {
  const std::vector<std::string> names = checkpoint_folders(dir);
  // Newest first; only complete ones (the manifest is written last).
  for (auto name = names.rbegin(); name != names.rend(); ++name) {
    const std::string folder = dir + "/" + *name;
    if (!fs::exists(folder + "/manifest.json")) continue;
    try {
      verify_checkpoint(folder);
      return folder;
    } catch (const baton::ConfigError& damaged) {
      BATON_LOG_WARN("checkpoint", "skipping " << folder << ": " << damaged.what());
    }
  }
  return "";
}

Checkpointer::Checkpointer(CheckpointSettings settings, int rank, int world_size,
                           std::shared_ptr<baton::Store> store, std::chrono::milliseconds timeout,
                           std::vector<std::pair<std::string, at::Tensor>> named_params,
                           std::vector<std::pair<std::string, at::Tensor>> named_buffers,
                           torch::optim::Optimizer* optimizer)
    : settings_(std::move(settings)),
      rank_(rank),
      world_size_(world_size),
      store_(std::move(store)),
      timeout_(timeout),
      named_params_(std::move(named_params)),
      named_buffers_(std::move(named_buffers)),
      optimizer_(optimizer) {}

bool Checkpointer::due(int step, int last_step) const {
  if (!settings_.enabled) return false;
  return step == last_step || (settings_.every > 0 && step % settings_.every == 0);
}

std::string Checkpointer::save(int step, const std::string& schedule_name) {
  if (!settings_.writes) return std::string();
  const std::string folder = step_folder(settings_.dir, step);
  try {
    baton::make_folders(folder, "checkpoint");
  } catch (const baton::Error& error) {
    throw baton::Error("rank " + std::to_string(rank_) + ": " + error.what());
  }
  const RankRecord record = write_rank_files(folder, step);
  if (store_) {
    const std::string record_text = record_json(record).dump();
    store_->set(baton::store_keys::checkpoint_record(step, rank_),
                std::vector<std::uint8_t>(record_text.begin(), record_text.end()));
    store_->add(baton::store_keys::checkpoint_written(step), 1);
  }
  if (rank_ == 0) write_manifest(folder, step, schedule_name, record);
  return folder;
}

RankRecord Checkpointer::write_rank_files(const std::string& folder, int step) {
  c10::Dict<std::string, at::Tensor> params;
  for (const auto& named : named_params_)
    params.insert("param." + named.first, host_copy(named.second));
  for (const auto& named : named_buffers_)
    params.insert("buffer." + named.first, host_copy(named.second));
  add_optimizer_state_by_name(*optimizer_, named_params_, &params);
  RankRecord record;
  for (const auto& item : params) record.entries[item.key()] = describe_entry(item.value());
  const std::vector<char> pickled = torch::pickle_save(c10::IValue(params));
  const std::string bytes(pickled.begin(), pickled.end());
  record.files[rank_file_name(rank_, ".pt")] = {static_cast<std::int64_t>(bytes.size()),
                                                checksum_text(bytes)};
  baton::write_file_atomically(rank_file(folder, rank_, ".pt"), bytes);
  if (step == settings_.kill_while_writing_step) std::raise(SIGKILL);
  torch::serialize::OutputArchive archive;
  optimizer_->save(archive);
  std::ostringstream optimizer_stream;
  archive.save_to(optimizer_stream);
  const std::string optimizer_bytes = optimizer_stream.str();
  record.files[rank_file_name(rank_, ".optim")] = {
      static_cast<std::int64_t>(optimizer_bytes.size()), checksum_text(optimizer_bytes)};
  baton::write_file_atomically(rank_file(folder, rank_, ".optim"), optimizer_bytes);
  return record;
}

void Checkpointer::write_manifest(const std::string& folder, int step,
                                  const std::string& schedule_name, const RankRecord& own) {
  const std::string written_key = baton::store_keys::checkpoint_written(step);
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  records.push_back(record_json(own));
  if (store_) {
    wait_for_count(*store_, written_key, world_size_, timeout_,
                   "rank 0: checkpoint of step " + std::to_string(step));
    for (int r = 1; r < world_size_; ++r) {
      const auto value = store_->get(baton::store_keys::checkpoint_record(step, r), timeout_);
      records.push_back(nlohmann::ordered_json::parse(std::string(value.begin(), value.end())));
    }
  }
  nlohmann::ordered_json manifest = {{"format", kManifestFormat},
                                     {"step", step},
                                     {"world_size", world_size_},
                                     {"data_parallel", settings_.data_parallel},
                                     {"schedule", schedule_name},
                                     {"optimizer", settings_.optimizer},
                                     // the rank files hold each parameter's optimizer state by
                                     // name: the checkpoint resumes onto any layout
                                     {"state_by_name", true}};
  if (!settings_.run_id.empty()) {
    manifest["run"] = {{"name", settings_.run_name}, {"id", settings_.run_id}};
  }
  manifest["files"] = checkpoint_file_names(world_size_);
  manifest["ranks"] = records;
  if (!settings_.schedule_choice.empty()) {
    manifest["schedule_choice"] = nlohmann::json::parse(settings_.schedule_choice);
  }
  if (loss_scaler_ != nullptr && loss_scaler_->enabled()) {
    manifest["loss_scale"] = loss_scale_json(loss_scaler_->state());
  }
  baton::write_file_atomically(folder + "/manifest.json", manifest.dump(2) + "\n");
  if (store_) {  // every rank has written and reported: the step's keys are spent
    for (int r = 1; r < world_size_; ++r) {
      store_->remove(baton::store_keys::checkpoint_record(step, r));
    }
    store_->remove(written_key);
  }
}

void Checkpointer::restore_by_name(const std::string& folder, int written_by, bool state_by_name) {
  std::set<std::string> wanted;
  for (const auto& named : named_params_) wanted.insert(named.first);
  for (const auto& named : named_buffers_) wanted.insert(named.first);
  // name -> the tensors stored for it (its parameter and its optimizer state), from
  // whichever rank file holds it.
  std::map<std::string, at::Tensor> entries;
  for (int r = 0; r < written_by; ++r) {
    const auto dict = load_checkpoint_parameters(rank_file(folder, r, ".pt"));
    verify_rank_entries(folder, r, dict);
    for (const auto& item : dict) {
      if (!item.key().isString() || !item.value().isTensor()) continue;
      const std::string key = item.key().toStringRef();
      const std::size_t dot = key.find('.');
      std::string name = key.substr(dot + 1);
      if (key.rfind("optim.", 0) == 0) name = name.substr(0, name.rfind('.'));
      if (wanted.count(name)) entries[key] = item.value().toTensor();
    }
  }
  at::NoGradGuard no_grad;
  for (auto& named : named_params_) {
    const auto found = entries.find("param." + named.first);
    if (found == entries.end()) {
      throw baton::ConfigError("--resume: checkpoint '" + folder + "' has no parameter '" +
                               named.first + "' in any of its " + std::to_string(written_by) +
                               " rank files (was it written by another model?)");
    }
    if (!found->second.sizes().equals(named.second.sizes())) {
      throw baton::ConfigError("--resume: parameter '" + named.first + "' in '" + folder +
                               "' has another shape than this run's model");
    }
    named.second.copy_(found->second);
  }
  // Checkpoints from before buffers were kept have none: the model's own values stay.
  for (auto& named : named_buffers_) {
    const auto found = entries.find("buffer." + named.first);
    if (found != entries.end() && found->second.sizes().equals(named.second.sizes())) {
      named.second.copy_(found->second);
    }
  }
  if (!state_by_name) {
    throw baton::ConfigError("--resume: checkpoint '" + folder + "' was written by a pipeline of " +
                             std::to_string(written_by) +
                             " ranks before checkpoints kept the optimizer state by name, so "
                             "it resumes only onto that layout (" +
                             std::to_string(written_by) +
                             " ranks per pipeline, the same stages and cuts)");
  }
  restore_optimizer_state_by_name(
      *optimizer_, settings_.optimizer, named_params_,
      [&entries](const std::string& key) {
        const auto found = entries.find(key);
        return found == entries.end() ? at::Tensor() : found->second;
      },
      folder);
  if (rank_ == 0) {
    BATON_LOG_INFO("checkpoint", "restored by parameter name: written by a pipeline of "
                                     << written_by << " ranks, this one has " << world_size_);
  }
}

Checkpointer::Restored Checkpointer::restore_latest() {
  const std::string folder = latest_checkpoint(settings_.dir);
  if (folder.empty()) {
    throw baton::ConfigError(
        "--resume: no complete checkpoint (a step-* folder with a "
        "manifest.json) in '" +
        settings_.dir + "'");
  }
  const Manifest manifest = read_manifest(folder + "/manifest.json");
  const long step = manifest.step;
  const long world = manifest.world_size;
  if (!manifest.optimizer.empty() && manifest.optimizer != settings_.optimizer) {
    throw baton::ConfigError(
        "--resume: checkpoint '" + folder + "' holds the state of optimizer " + manifest.optimizer +
        ", this run uses optimizer.name " + settings_.optimizer +
        "; resume with optimizer.name: " + manifest.optimizer + ", or start a new run");
  }
  // The same layout (this rank's file holds exactly its parameters) restores bit for bit from
  // its own files, the optimizer from its archive; any other by name from every file.
  bool same_layout = world == world_size_;
  std::optional<c10::Dict<c10::IValue, c10::IValue>> own;
  if (same_layout) {
    own = load_checkpoint_parameters(rank_file(folder, rank_, ".pt"));
    verify_rank_entries(folder, rank_, *own);
    std::size_t stored = 0;
    for (const auto& item : *own) {
      stored += item.key().isString() && item.key().toStringRef().rfind("param.", 0) == 0;
    }
    same_layout = stored == named_params_.size();
    for (const auto& named : named_params_) {
      same_layout = same_layout && own->contains("param." + named.first);
    }
  }
  if (!same_layout) {
    restore_by_name(folder, static_cast<int>(world), manifest.state_by_name);
    return {static_cast<int>(step), folder, manifest.loss_scale};
  }
  const auto& dict = *own;
  at::NoGradGuard no_grad;
  for (auto& named : named_params_) {
    const std::string key = "param." + named.first;
    if (!dict.contains(key)) {
      throw baton::ConfigError("--resume: checkpoint '" + folder + "' has no parameter '" +
                               named.first + "' for rank " + std::to_string(rank_) +
                               " (was it written with another model, schedule or cut?)");
    }
    const at::Tensor saved = dict.at(key).toTensor();
    if (!saved.sizes().equals(named.second.sizes())) {
      throw baton::ConfigError("--resume: parameter '" + named.first + "' in '" + folder +
                               "' has another shape than this run's model");
    }
    named.second.copy_(saved);
  }
  for (auto& named : named_buffers_) {
    const std::string key = "buffer." + named.first;
    if (!dict.contains(key)) continue;  // written before buffers were kept
    const at::Tensor saved = dict.at(key).toTensor();
    if (saved.sizes().equals(named.second.sizes())) named.second.copy_(saved);
  }
  const std::string optimizer_file = rank_file(folder, rank_, ".optim");
  std::istringstream optimizer_bytes(baton::read_file(optimizer_file, "checkpoint file"));
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(optimizer_bytes);
    optimizer_->load(archive);
  } catch (const c10::Error& error) {
    throw baton::ConfigError("--resume: the optimizer state in '" + optimizer_file +
                             "' cannot be loaded into optimizer " + settings_.optimizer + " (" +
                             error.what_without_backtrace() + ")");
  }
  return {static_cast<int>(step), folder, manifest.loss_scale};
}

}  // namespace baton_app
