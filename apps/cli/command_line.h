// The command line of baton's programs, on CLI11. Every command and option is declared once,
// which gives `--help` on every command with generated usage, ranges and choices checked as
// the words are read, and baton's own messages: an unknown option or command names the
// nearest known one, and a wrong command line prints the usage of the command it was for.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "baton/config.h"

namespace baton_app {

// A wrong command line: printed with the usage of the command (when known), exit status 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message, std::string usage = {})
      : std::runtime_error(message), usage_(std::move(usage)) {}
  const std::string& usage() const { return usage_; }

 private:
  std::string usage_;
};

// "must be an integer from LOW to HIGH, got 'X'".
CLI::Validator integer_in(long low, long high);
// "must be a, b or c, got 'x' (did you mean 'a'?)".
CLI::Validator one_of(const std::vector<std::string>& choices);

// The options several commands share, each declared one way.
// --format, one of `choices`; `format` holds the default.
CLI::Option* add_format_option(CLI::App& command, std::string& format,
                               const std::vector<std::string>& choices,
                               const std::string& description);
// An option that may be given many times, one value each (--set, --param), all kept.
CLI::Option* add_repeatable_option(CLI::App& command, const std::string& name,
                                   std::vector<std::string>& values, const std::string& description,
                                   const std::string& type_name = "KEY=VALUE");
// --plugin-path DIR, searched before the usual folders.
CLI::Option* add_plugin_path_option(CLI::App& command, std::vector<std::string>& folders);

// "--param key=value" words as the unchecked `params:` of `key_path` ("schedule.params"),
// each value's origin naming the word; a word without "key=" is a UsageError.
baton::RawParams params_from_command_line(const std::vector<std::string>& assignments,
                                          const std::string& key_path);

// Commands (and commands under commands: `config check`, `bench transport`), each with the
// function that runs it.
class CommandLine {
 public:
  // `program`: how usage lines begin ("baton", "baton bench").
  CommandLine(const std::string& program, const std::string& description);

  CLI::App& root() { return app_; }

  // Declares command `name` under `parent`; `run` gives the exit status when it is the
  // command chosen (none: the command only groups others, or another program runs it).
  CLI::App& add_command(CLI::App& parent, const std::string& name, const std::string& description,
                        std::function<int()> run = {});

  // Reads `args` (the words after the program's name) and runs the command chosen: its exit
  // status. `--help` prints the usage of the command it follows and gives 0. A wrong command
  // line, or a UsageError from the command itself, becomes a UsageError with that command's
  // usage.
  int run(const std::vector<std::string>& args);

 private:
  CLI::App app_;
  std::vector<std::pair<const CLI::App*, std::function<int()>>> commands_;
};

// The usage of `command`, its full name first ("baton bench transport").
std::string usage_of(const CLI::App& command);

// Runs `body` and returns its exit status; a UsageError prints its message and usage (exit
// 2), any other exception its message (exit 1).
int run_guarded(const std::function<int()>& body);

}  // namespace baton_app
