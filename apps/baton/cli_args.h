// A small command-line parser: positional words, `--flag`, `--key value`, `--key=value`,
// and repeatable `--set key=value`. Unknown options are errors with a suggestion.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace baton_app {

class CliArgs {
 public:
  // `value_options`: options that take a value; `flag_options`: options that don't.
  CliArgs(const std::vector<std::string>& args, const std::vector<std::string>& value_options,
          const std::vector<std::string>& flag_options);

  const std::vector<std::string>& positional() const { return positional_; }
  bool flag(const std::string& name) const;
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  // The last value of an option, or `fallback`.
  std::string value(const std::string& name, const std::string& fallback = {}) const;
  // The last value of an integer option in [low, high], or `fallback` when absent; a value
  // that is not such an integer is a UsageError naming the option and the range.
  int integer(const std::string& name, int fallback, int low, int high) const;
  // The value of an option that must be one of `allowed` (or `fallback` when absent); any
  // other is a UsageError with a suggestion.
  std::string one_of(const std::string& name, const std::vector<std::string>& allowed,
                     const std::string& fallback) const;
  // The one optional positional word (a CONFIG); more than one is a UsageError naming
  // `command`.
  std::vector<std::string> at_most_one_positional(const std::string& command) const;
  // Every value of a repeatable option (--set).
  std::vector<std::string> values(const std::string& name) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> flags_;
};

// Thrown for a wrong command line; main() prints it with the usage and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace baton_app
