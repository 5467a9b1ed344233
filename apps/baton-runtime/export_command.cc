// `baton export CHECKPOINT [--out FILE]`: merges the ranks' files of one checkpoint into a
// single state dict of the full model — {name: tensor} for its parameters and the buffers
// its state dict holds, under the names the unpipelined model has — that Python loads with
// torch.load() and model.load_state_dict(). CHECKPOINT is a step-* folder or a
// checkpoints folder (its newest complete checkpoint).
#include <torch/serialize.h>
#include <torch/torch.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "baton/error.h"
#include "baton/files.h"
#include "commands.h"
#include "owned_outputs.h"
#include "training/checkpoint.h"

namespace baton_app {
namespace {

namespace fs = std::filesystem;

// An export carries a zip comment saying so (the archive's last bytes; PyTorch's reader and
// Python's zipfile skip it), so that a later export may replace it and nothing else is.
constexpr char kExportComment[] = "written by baton export";

std::string with_export_comment(std::string archive) {
  // The end-of-central-directory record: 22 bytes, the last two the comment's length (0).
  const std::size_t record = archive.size() - 22;
  if (archive.size() < 22 || archive.compare(record, 4, "PK\x05\x06") != 0 ||
      archive[archive.size() - 2] != 0 || archive[archive.size() - 1] != 0) {
    throw baton::Error("export: LibTorch wrote an archive without the zip record baton expects");
  }
  const std::size_t length = sizeof(kExportComment) - 1;
  archive[archive.size() - 2] = static_cast<char>(length & 0xff);
  archive[archive.size() - 1] = static_cast<char>(length >> 8);
  return archive + kExportComment;
}

bool is_baton_export(const std::string& path) {
  try {
    const baton::ReadableFile file = baton::ReadableFile::open(path, "export");
    const std::size_t tail = 22 + sizeof(kExportComment) - 1;
    if (file.size() < tail) return false;
    std::string bytes(tail, '\0');
    file.read_at(file.size() - tail, bytes.data(), bytes.size());
    return bytes.compare(0, 4, "PK\x05\x06") == 0 &&
           bytes.compare(22, std::string::npos, kExportComment) == 0;
  } catch (const baton::Error&) {
    return false;
  }
}

int export_checkpoint(std::string folder, std::string out) {
  int ranks = 0;
  if (!fs::exists(folder + "/manifest.json")) {
    // A checkpoints folder: its newest checkpoint that verifies (damaged ones are skipped
    // with a warning saying why).
    const std::string latest = latest_checkpoint(folder);
    if (latest.empty()) {
      throw baton::Error("'" + folder +
                         "' is neither a complete checkpoint (a folder with manifest.json) nor "
                         "a folder holding one that verifies");
    }
    std::cout << "exporting " << latest << ", the newest checkpoint in " << folder
              << " that verifies\n";
    folder = latest;
  }
  // A checkpoint missing a rank's file, with a damaged manifest, or files that are not the
  // ones written would export a part of the model, or another one, as if it were the model.
  try {
    ranks = verify_checkpoint(folder);
  } catch (const baton::ConfigError& damaged) {
    const std::string parent = fs::path(folder).parent_path().string();
    const std::string newest = latest_checkpoint(parent);
    throw baton::ConfigError(std::string(damaged.what()) +
                             (newest.empty()
                                  ? "; no other checkpoint in '" + parent + "' verifies either"
                                  : "; the newest checkpoint that verifies is " + newest +
                                        " (baton export " + parent + " takes it)"));
  }
  std::map<std::string, at::Tensor> merged;  // sorted: a stable file
  int parameters = 0, buffers = 0;
  std::vector<std::string> rank_files;
  for (int rank = 0; rank < ranks; ++rank) {
    rank_files.push_back(rank_file(folder, rank, ".pt"));
  }
  for (int rank = 0; rank < ranks; ++rank) {
    const auto dict = load_checkpoint_parameters(rank_files[rank]);
    verify_rank_entries(folder, rank, dict);
    for (const auto& entry : dict) {
      const std::string key = entry.key().toStringRef();
      const bool parameter = key.rfind("param.", 0) == 0;
      if (!parameter && key.rfind("buffer.", 0) != 0) continue;
      const std::string name = key.substr(key.find('.') + 1);
      if (merged.count(name)) {
        throw baton::Error(std::string(parameter ? "parameter" : "buffer") + " '" + name +
                           "' appears in more than one rank's file of '" + folder + "'");
      }
      merged[name] = entry.value().toTensor();
      (parameter ? parameters : buffers) += 1;
    }
  }
  c10::Dict<std::string, at::Tensor> state_dict;
  for (const auto& entry : merged) state_dict.insert(entry.first, entry.second);
  // Next to the run's checkpoints, never inside one: a checkpoint holds what its manifest
  // lists.
  const fs::path step_folder(folder);
  if (out.empty()) {
    const fs::path run_folder = step_folder.parent_path().parent_path();
    out = (run_folder.empty() ? fs::path(".") : run_folder).string() + "/model-" +
          step_folder.filename().string() + ".pt";
  }
  check_output_file(out, "--out", "an export", is_baton_export);
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(state_dict));
  baton::write_file_atomically(out, with_export_comment(std::string(bytes.begin(), bytes.end())));
  std::cout << "exported " << parameters << " parameters"
            << (buffers ? " and " + std::to_string(buffers) + " buffers" : std::string())
            << " from " << rank_files.size() << " ranks of " << folder << " to " << out
            << "\nload it in Python: state_dict = torch.load(\"" << out << "\")\n";
  return 0;
}

}  // namespace

void add_export_command(CommandLine& command_line) {
  struct Options {
    std::string checkpoint, out;
  };
  auto options = std::make_shared<Options>();
  CLI::App& export_command = command_line.add_command(
      command_line.root(), "export",
      "merge the ranks' files of a checkpoint into one state dict of the full model, named as "
      "the unpipelined model names its parameters (Python: torch.load)",
      [options] { return export_checkpoint(options->checkpoint, options->out); });
  export_command
      .add_option("CHECKPOINT", options->checkpoint,
                  "a step-* folder, or a checkpoints folder (its newest complete checkpoint)")
      ->required()
      ->type_name("DIR");
  export_command
      .add_option("--out", options->out,
                  "the file to write (default: <run folder>/model-step-NNNNNN.pt, next to the "
                  "checkpoints); never inside a checkpoint, nor over a file that is not an "
                  "earlier export")
      ->type_name("FILE");
}

}  // namespace baton_app
