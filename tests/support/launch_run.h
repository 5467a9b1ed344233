// Runs `baton launch` for a test: a fresh output folder, a hard timeout, and the dumps
// (rank<r>.pt, see TrainOptions::dump_dir) read back.
#pragma once

// Only what reading the dumps needs: <torch/torch.h> here made every test file that launches
// runs compile all of LibTorch's C++ API (~3x the time).
#include <ATen/core/Tensor.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "run_command.h"

namespace baton_test {

struct LaunchResult {
  CommandResult command;
  std::string dump_dir;                                  // rank<r>.pt
  std::vector<std::map<std::string, at::Tensor>> dumps;  // per rank
};

// `base` and then `more`: a run's settings with a case's own after them.
inline std::vector<std::string> plus(std::vector<std::string> base,
                                     const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

inline std::map<std::string, at::Tensor> read_dump(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::map<std::string, at::Tensor> entries;
  if (!file) return entries;
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  const auto dict = torch::jit::pickle_load(bytes).toGenericDict();
  for (const auto& entry : dict) entries[entry.key().toStringRef()] = entry.value().toTensor();
  return entries;
}

// `settings`: --set assignments. The run's outputs go to a fresh folder under the test's
// temp dir; `timeout_s` bounds the whole launch; `extra` goes on the command line as is
// ("--resume").
inline LaunchResult launch(const std::string& baton, int ranks,
                           const std::vector<std::string>& settings, const std::string& name,
                           int timeout_s = 180, const std::string& extra = "") {
  const std::string dir = ::testing::TempDir() + "/launch-" + name;
  run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  std::string command = "timeout -k 5 " + std::to_string(timeout_s) + " " + baton + " launch -n " +
                        std::to_string(ranks) + " --no-env --dump-dir '" + dir + "'" +
                        " --set run.output_dir='" + dir + "/runs'";
  for (const auto& setting : settings) command += " --set '" + setting + "'";
  if (!extra.empty()) command += " " + extra;
  LaunchResult result;
  result.dump_dir = dir;
  result.command = run_command(command);
  for (int rank = 0; rank < ranks; ++rank) {
    result.dumps.push_back(read_dump(dir + "/rank" + std::to_string(rank) + ".pt"));
  }
  return result;
}

}  // namespace baton_test
