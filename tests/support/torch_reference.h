// The independent reference: tests/pipeline/torch_reference.py trains the same model on the
// same data with plain PyTorch (Debian's python3-torch) and compares every rank's dump with
// it. Nothing of baton runs on the reference side.
#pragma once

#include <string>
#include <vector>

#include "launch_run.h"

namespace baton_test {

// Exit status 0 and "all N comparisons match" when the run equals the reference; the output
// lists what differs otherwise. `settings` are the launch's --set assignments;
// `python_model`, when given, is the author's file defining make_model(): the reference
// trains that class, under its own parameter names.
inline CommandResult compare_with_torch(const LaunchResult& run, int ranks,
                                        const std::vector<std::string>& settings,
                                        const std::string& python_model = "") {
  std::string command = std::string(BATON_PYTHON) + " '" + BATON_TORCH_REFERENCE + "' --dumps '" +
                        run.dump_dir + "' --ranks " + std::to_string(ranks);
  if (!python_model.empty()) command += " --python-model '" + python_model + "'";
  for (const auto& setting : settings) command += " '" + setting + "'";
  return run_command(command);
}

}  // namespace baton_test
