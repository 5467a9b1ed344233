// Runs a command line through the shell, capturing its output and exit status, for tests
// of the `baton` program itself.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace baton_test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Like run_command, with stdout alone in `output` (stderr is discarded): for commands whose
// stdout is a document, such as JSON.
inline CommandResult run_command_stdout(const std::string& command) {
  return run_command("{ { " + command + " ; } 2>/dev/null ; }");
}

}  // namespace baton_test
