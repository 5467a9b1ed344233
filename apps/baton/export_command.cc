// `baton export CHECKPOINT [--out FILE]`: merges the ranks' files of one checkpoint into a
// single state dict of the full model — {parameter name: tensor}, the names the unpipelined
// model has — that Python loads with torch.load(). CHECKPOINT is a step-* folder or a
// checkpoints folder (its newest complete checkpoint).
#include <torch/serialize.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "baton/atomic_file.h"
#include "baton/error.h"
#include "cli_args.h"
#include "commands.h"
#include "training/checkpoint.h"

namespace baton_app {
namespace {

namespace fs = std::filesystem;

const char* const kExportUsage = "usage: baton export CHECKPOINT [--out FILE]\n";

std::string read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw baton::Error("cannot read '" + path + "'");
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

}  // namespace

int run_export_command(const std::vector<std::string>& args) {
  CliArgs cli(args, {"out"}, {});
  if (cli.positional().size() != 1) throw UsageError(kExportUsage);
  std::string folder = cli.positional()[0];
  if (!fs::exists(folder + "/manifest.json")) {
    const std::string latest = latest_checkpoint(folder);
    if (latest.empty()) {
      throw baton::Error("'" + folder +
                         "' is neither a complete checkpoint (a folder with manifest.json) nor "
                         "a folder holding one");
    }
    folder = latest;
  }
  std::map<std::string, at::Tensor> merged;  // sorted: a stable file
  std::vector<std::string> rank_files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("rank", 0) == 0 && entry.path().extension() == ".pt")
      rank_files.push_back(entry.path().string());
  }
  std::sort(rank_files.begin(), rank_files.end());
  for (const auto& path : rank_files) {
    const std::string bytes = read_bytes(path);
    const auto dict =
        torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
    for (const auto& entry : dict) {
      const std::string key = entry.key().toStringRef();
      if (key.rfind("param.", 0) != 0) continue;
      const std::string name = key.substr(6);
      if (merged.count(name)) {
        throw baton::Error("parameter '" + name + "' appears in more than one rank's file of '" +
                           folder + "'");
      }
      merged[name] = entry.value().toTensor();
    }
  }
  c10::Dict<std::string, at::Tensor> state_dict;
  for (const auto& entry : merged) state_dict.insert(entry.first, entry.second);
  const std::string out = cli.value("out", folder + "/model.pt");
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(state_dict));
  baton::write_file_atomically(out, std::string(bytes.begin(), bytes.end()));
  std::cout << "exported " << merged.size() << " parameters from " << rank_files.size()
            << " ranks of " << folder << " to " << out
            << "\nload it in Python: state_dict = torch.load(\"" << out << "\")\n";
  return 0;
}

}  // namespace baton_app
