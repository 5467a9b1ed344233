// The independent reference: tests/pipeline/torch_reference.py trains the same model on the
// same data with plain PyTorch (Debian's python3-torch) and compares every rank's dump with
// it. Nothing of baton runs on the reference side.
#pragma once

#include <string>
#include <vector>

#include "launch_run.h"

namespace baton_test {

// Exit status 0 and "all N comparisons match" when the dumps in `dump_dir` (a run of `ranks`
// ranks) equal the reference; the output lists what differs otherwise. `settings` are the
// launch's --set assignments; `config`, when given, the YAML file the run was launched with
// (the reference reads it as baton does, its relative paths from `working_dir`);
// `python_model`, when given, is the author's file defining make_model(): the reference
// trains that class, under its own parameter names. The tolerances are the script's own, one
// rule for every comparison (docs/testing.md, "Tolerances").
inline CommandResult compare_dumps_with_torch(const std::string& dump_dir, int ranks,
                                              const std::vector<std::string>& settings,
                                              const std::string& python_model = "",
                                              const std::string& config = "",
                                              const std::string& working_dir = "") {
  std::string command = std::string(BATON_PYTHON) + " '" + BATON_TORCH_REFERENCE + "' --dumps '" +
                        dump_dir + "' --ranks " + std::to_string(ranks);
  if (!working_dir.empty()) command = "cd '" + working_dir + "' && " + command;
  if (!python_model.empty()) command += " --python-model '" + python_model + "'";
  if (!config.empty()) command += " --config '" + config + "'";
  for (const auto& setting : settings) command += " '" + setting + "'";
  return run_command(command);
}

inline CommandResult compare_with_torch(const LaunchResult& run, int ranks,
                                        const std::vector<std::string>& settings,
                                        const std::string& python_model = "") {
  return compare_dumps_with_torch(run.dump_dir, ranks, settings, python_model);
}

}  // namespace baton_test
