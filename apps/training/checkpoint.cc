#include "checkpoint.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/store_keys.h"
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
  return {number("step"), number("world_size")};
}

}  // namespace

std::string latest_checkpoint(const std::string& dir) {
  std::error_code error;
  std::vector<std::string> complete;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) == 0 && fs::exists(entry.path() / "manifest.json"))
      complete.push_back(entry.path().string());
  }
  if (complete.empty()) return "";
  return *std::max_element(complete.begin(), complete.end());  // zero-padded: text order
}

Checkpointer::Checkpointer(CheckpointSettings settings, int rank, int world_size,
                           std::shared_ptr<baton::Store> store, std::chrono::milliseconds timeout,
                           std::vector<std::pair<std::string, at::Tensor>> named_params,
                           torch::optim::Optimizer* optimizer)
    : settings_(std::move(settings)),
      rank_(rank),
      world_size_(world_size),
      store_(std::move(store)),
      timeout_(timeout),
      named_params_(std::move(named_params)),
      optimizer_(optimizer) {}

bool Checkpointer::due(int step, int last_step) const {
  if (!settings_.enabled) return false;
  return step == last_step || (settings_.every > 0 && step % settings_.every == 0);
}

void Checkpointer::save(int step, const std::string& schedule_name) {
  const std::string folder = step_folder(settings_.dir, step);
  try {
    baton::make_folders(folder, "checkpoint");
  } catch (const baton::Error& error) {
    throw baton::Error("rank " + std::to_string(rank_) + ": " + error.what());
  }
  c10::Dict<std::string, at::Tensor> params;
  for (const auto& named : named_params_)
    params.insert("param." + named.first, named.second.detach().clone());
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(params));
  baton::write_file_atomically(rank_file(folder, rank_, ".pt"),
                               std::string(bytes.begin(), bytes.end()));
  torch::serialize::OutputArchive archive;
  optimizer_->save(archive);
  std::ostringstream optimizer_bytes;
  archive.save_to(optimizer_bytes);
  baton::write_file_atomically(rank_file(folder, rank_, ".optim"), optimizer_bytes.str());

  const std::string written_key = baton::store_keys::checkpoint_written(step);
  if (store_) store_->add(written_key, 1);
  if (rank_ != 0) return;
  // The manifest marks the checkpoint complete: only once every rank's files are in place.
  if (store_) {
    wait_for_count(*store_, written_key, world_size_, timeout_,
                   "rank 0: checkpoint of step " + std::to_string(step));
  }
  nlohmann::ordered_json manifest = {{"format", kManifestFormat},
                                     {"step", step},
                                     {"world_size", world_size_},
                                     {"schedule", schedule_name}};
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (int r = 0; r < world_size_; ++r) {
    files.push_back("rank" + std::to_string(r) + ".pt");
    files.push_back("rank" + std::to_string(r) + ".optim");
  }
  manifest["files"] = files;
  baton::write_file_atomically(folder + "/manifest.json", manifest.dump(2) + "\n");
}

int Checkpointer::restore_latest() {
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
  if (step < 1 || world != world_size_) {
    throw baton::ConfigError("--resume: checkpoint '" + folder + "' was written by " +
                             std::to_string(world) + " ranks; this run has " +
                             std::to_string(world_size_));
  }
  const std::string bytes = baton::read_file(rank_file(folder, rank_, ".pt"), "checkpoint file");
  const auto dict =
      torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
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
  std::istringstream optimizer_bytes(
      baton::read_file(rank_file(folder, rank_, ".optim"), "checkpoint file"));
  torch::serialize::InputArchive archive;
  archive.load_from(optimizer_bytes);
  optimizer_->load(archive);
  return static_cast<int>(step);
}

}  // namespace baton_app
