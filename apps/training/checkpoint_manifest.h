// A checkpoint's manifest.json: what marks a checkpoint complete and proves its files are the
// ones written (each rank's files with size and checksum, each entry's dtype and shape).
// Read without LibTorch, so that it can be fuzzed (tests/fuzz/fuzz_checkpoint_manifest.cc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loss_scaler.h"

namespace baton_app {

// Format 2 records every file's size and checksum and every entry's dtype and shape; format 1
// (earlier baton) is still read, with the checks it allows — but a manifest that holds the
// records is checked against them whatever its format says (an edit to "1" skips nothing).
inline constexpr const char* kManifestFormat = "baton-checkpoint-2";
inline constexpr const char* kLegacyManifestFormat = "baton-checkpoint-1";

struct FileRecord {
  std::int64_t bytes = -1;
  std::string checksum;
};

// What one rank wrote: its files and every entry of its .pt ("param.x" -> "float32[4, 8]").
struct RankRecord {
  std::map<std::string, FileRecord> files;
  std::map<std::string, std::string> entries;
};

// The manifest; one that is not the JSON save() writes is refused naming the file and what
// is wrong, never half-read.
struct Manifest {
  int format = 2;
  long step = 0;
  long world_size = 0;
  std::string optimizer;  // empty in checkpoints written before it was recorded
  // The run that wrote it (run_folder.h): its run.name and id; empty in checkpoints written
  // before runs had an identity.
  std::string run_name;
  std::string run_id;
  std::vector<std::string> files;
  // The rank files hold each parameter's optimizer state by name (optimizer_state.h), so
  // the checkpoint can be restored onto another layout.
  bool state_by_name = false;
  std::vector<RankRecord> ranks;  // format 2: one per rank
  // precision.loss_scale: the scaler's state after the checkpoint's step, the same on every
  // rank; empty when the run that wrote it did not scale its loss.
  std::optional<LossScaleState> loss_scale;
};

nlohmann::ordered_json loss_scale_json(const LossScaleState& state);

// One rank's record as the manifest holds it, and back. parse_record throws ConfigError
// starting with `where`.
nlohmann::ordered_json record_json(const RankRecord& record);
RankRecord parse_record(const nlohmann::json& json, const std::string& where);

// The manifest in `text`, read from `path`: throws ConfigError naming the path and what is
// wrong for anything save() would not have written (never a raw JSON exception).
Manifest parse_manifest(const std::string& text, const std::string& path);
Manifest read_manifest(const std::string& path);

}  // namespace baton_app
