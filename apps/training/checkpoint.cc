#include "checkpoint.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/log.h"
#include "baton/store_keys.h"
#include "optimizer_state.h"
#include "store_count.h"

namespace baton_app {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifestFormat = "baton-checkpoint-1";

std::string step_folder(const std::string& dir, int step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%06d", step);
  return dir + "/" + name;
}

std::string rank_file(const std::string& folder, int rank, const std::string& suffix) {
  return folder + "/rank" + std::to_string(rank) + suffix;
}

// The manifest's step and world size; a manifest that is not the JSON save() writes is
// refused naming the file, never half-read.
struct Manifest {
  long step = 0;
  long world_size = 0;
  std::string optimizer;  // empty in checkpoints written before it was recorded
  std::vector<std::string> files;
  // The rank files hold each parameter's optimizer state by name (optimizer_state.h), so
  // the checkpoint can be restored onto another layout.
  bool state_by_name = false;
};

Manifest read_manifest(const std::string& path) {
  const std::string text = baton::read_file(path, "checkpoint manifest");
  const nlohmann::json manifest = nlohmann::json::parse(text, nullptr, false);
  if (!manifest.is_object() || manifest.value("format", std::string()) != kManifestFormat) {
    throw baton::ConfigError("checkpoint manifest '" + path + "' is not a " + kManifestFormat +
                             " manifest (damaged or not written by baton); remove that "
                             "checkpoint folder to use the one before it");
  }
  const auto number = [&manifest](const char* key) -> long {
    const auto found = manifest.find(key);
    return found != manifest.end() && found->is_number_integer() ? found->get<long>() : -1;
  };
  Manifest read{
      number("step"), number("world_size"), manifest.value("optimizer", std::string()), {}};
  if (read.step < 1 || read.world_size < 1 || read.world_size > 1 << 16) {
    throw baton::ConfigError("checkpoint manifest '" + path + "' names step " +
                             std::to_string(read.step) + " written by " +
                             std::to_string(read.world_size) +
                             " ranks (damaged?); remove that checkpoint folder to use the one "
                             "before it");
  }
  read.state_by_name = manifest.value("state_by_name", false);
  const auto files = manifest.find("files");
  if (files != manifest.end() && files->is_array()) {
    for (const auto& file : *files) {
      if (file.is_string()) read.files.push_back(file.get<std::string>());
    }
  }
  return read;
}

// Every PyTorch archive (torch.save, pickle_save, an optimizer's archive) is a zip file,
// which ends with an end-of-central-directory record: a file cut short or overwritten with
// other bytes has none.
bool looks_like_whole_archive(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return false;
  const std::streamoff size = file.tellg();
  if (size < 22) return false;
  const std::streamoff tail = std::min<std::streamoff>(size, 65536 + 22);
  std::string bytes(static_cast<std::size_t>(tail), '\0');
  file.seekg(size - tail);
  file.read(bytes.data(), tail);
  return bytes.rfind(std::string("PK\x05\x06", 4)) != std::string::npos;
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
  std::vector<std::string> expected;
  for (long r = 0; r < manifest.world_size; ++r) {
    expected.push_back("rank" + std::to_string(r) + ".pt");
    expected.push_back("rank" + std::to_string(r) + ".optim");
  }
  if (!manifest.files.empty() && manifest.files != expected) {
    throw baton::ConfigError("checkpoint manifest '" + folder +
                             "/manifest.json' lists other files than " +
                             std::to_string(manifest.world_size) + " ranks write (damaged?)");
  }
  for (const std::string& file : expected) {
    const std::string path = folder + "/" + file;
    if (!fs::exists(path)) {
      throw baton::ConfigError("checkpoint '" + folder + "' was written by " +
                               std::to_string(manifest.world_size) + " ranks, but " + file +
                               " is missing: the checkpoint is incomplete");
    }
    if (!looks_like_whole_archive(path)) {
      throw baton::ConfigError("checkpoint file '" + path +
                               "' is truncated or not a PyTorch archive (no zip directory at "
                               "its end)");
    }
  }
  return static_cast<int>(manifest.world_size);
}

std::string latest_checkpoint(const std::string& dir) {
  std::error_code error;
  std::vector<std::string> complete;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) == 0 && fs::exists(entry.path() / "manifest.json"))
      complete.push_back(entry.path().string());
  }
  std::sort(complete.rbegin(), complete.rend());  // zero-padded: text order, newest first
  for (const std::string& folder : complete) {
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
  c10::Dict<std::string, at::Tensor> params;
  for (const auto& named : named_params_)
    params.insert("param." + named.first, named.second.detach().clone());
  for (const auto& named : named_buffers_)
    params.insert("buffer." + named.first, named.second.detach().clone());
  add_optimizer_state_by_name(*optimizer_, named_params_, &params);
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(params));
  baton::write_file_atomically(rank_file(folder, rank_, ".pt"),
                               std::string(bytes.begin(), bytes.end()));
  if (step == settings_.kill_while_writing_step) std::raise(SIGKILL);
  torch::serialize::OutputArchive archive;
  optimizer_->save(archive);
  std::ostringstream optimizer_bytes;
  archive.save_to(optimizer_bytes);
  baton::write_file_atomically(rank_file(folder, rank_, ".optim"), optimizer_bytes.str());

  const std::string written_key = baton::store_keys::checkpoint_written(step);
  if (store_) store_->add(written_key, 1);
  if (rank_ != 0) return folder;
  // The manifest marks the checkpoint complete: only once every rank's files are in place.
  if (store_) {
    wait_for_count(*store_, written_key, world_size_, timeout_,
                   "rank 0: checkpoint of step " + std::to_string(step));
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
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (int r = 0; r < world_size_; ++r) {
    files.push_back("rank" + std::to_string(r) + ".pt");
    files.push_back("rank" + std::to_string(r) + ".optim");
  }
  manifest["files"] = files;
  if (!settings_.schedule_choice.empty()) {
    manifest["schedule_choice"] = nlohmann::json::parse(settings_.schedule_choice);
  }
  baton::write_file_atomically(folder + "/manifest.json", manifest.dump(2) + "\n");
  return folder;
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
    return {static_cast<int>(step), folder};
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
  return {static_cast<int>(step), folder};
}

}  // namespace baton_app
