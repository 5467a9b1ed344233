#include "command_line.h"

#include <cerrno>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "baton/suggest.h"

namespace baton_app {
namespace {

std::string full_name(const CLI::App& command) {
  std::string name = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent; parent = parent->get_parent()) {
    name = parent->get_name() + " " + name;
  }
  return name;
}

// The command the words chose: the deepest one parsed.
const CLI::App* chosen_command(const CLI::App& root) {
  const CLI::App* command = &root;
  for (;;) {
    const auto chosen = command->get_subcommands();
    if (chosen.empty()) return command;
    command = chosen.front();
  }
}

// Commands in the empty group are internal (started by another baton process).
std::vector<std::string> visible_commands(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* sub : command.get_subcommands(
           [](const CLI::App* candidate) { return !candidate->get_group().empty(); })) {
    names.push_back(sub->get_name());
  }
  return names;
}

std::string listed(const std::vector<std::string>& words) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  }
  return text;
}

// What is wrong with the first word `command` did not expect, with a suggestion.
std::string describe_unexpected(const CLI::App& command, const std::string& word) {
  const std::string name = full_name(command);
  if (word.size() > 1 && word[0] == '-') {
    std::vector<std::string> options;
    for (const CLI::Option* option : command.get_options()) {
      for (const std::string& long_name : option->get_lnames()) options.push_back(long_name);
    }
    const std::string given = word.substr(0, word.find('='));
    const std::string bare = given.substr(given.find_first_not_of('-'));
    return "unknown option " + given + baton::did_you_mean(bare, options) + " for `" + name + "`";
  }
  const std::vector<std::string> commands = visible_commands(command);
  if (!commands.empty()) {
    return "unknown command '" + word + "'" + baton::did_you_mean(word, commands) + "; `" + name +
           "` has: " + listed(commands);
  }
  return "`" + name + "` does not take '" + word + "'";
}

}  // namespace

CLI::Validator integer_in(long low, long high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long value = std::strtol(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || errno == ERANGE || value < low || value > high) {
          return "must be an integer from " + std::to_string(low) + " to " + std::to_string(high) +
                 ", got '" + text + "'";
        }
        return {};
      },
      std::to_string(low) + ".." + std::to_string(high));
}

CLI::Validator one_of(const std::vector<std::string>& choices) {
  std::string description;
  for (const auto& choice : choices) description += (description.empty() ? "" : "|") + choice;
  return CLI::Validator(
      [choices](std::string& text) -> std::string {
        for (const auto& choice : choices) {
          if (text == choice) return {};
        }
        return "must be " + listed(choices) + ", got '" + text + "'" +
               baton::did_you_mean(text, choices);
      },
      description);
}

CLI::Option* add_format_option(CLI::App& command, std::string& format,
                               const std::vector<std::string>& choices,
                               const std::string& description) {
  return command.add_option("--format", format, description)
      ->capture_default_str()
      ->check(one_of(choices));
}

CLI::Option* add_repeatable_option(CLI::App& command, const std::string& name,
                                   std::vector<std::string>& values, const std::string& description,
                                   const std::string& type_name) {
  // One value per occurrence, so that `--set a=1 CONFIG` leaves CONFIG to the positional.
  return command.add_option(name, values, description)
      ->type_name(type_name)
      ->allow_extra_args(false);
}

CLI::Option* add_plugin_path_option(CLI::App& command, std::vector<std::string>& folders) {
  return add_repeatable_option(command, "--plugin-path", folders,
                               "a folder searched for plugins before the usual ones (repeatable)",
                               "DIR");
}

baton::RawParams params_from_command_line(const std::vector<std::string>& assignments,
                                          const std::string& key_path) {
  baton::RawParams raw;
  raw.key_path = key_path;
  raw.origin = {"--param"};
  for (const std::string& assignment : assignments) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw UsageError("--param " + assignment + ": expected key=value");
    }
    baton::RawValue value;
    value.scalar = assignment.substr(equals + 1);
    value.origin = {"--param " + assignment};
    value.key_origin = value.origin;
    raw.entries.emplace_back(assignment.substr(0, equals), value);
  }
  return raw;
}

CommandLine::CommandLine(const std::string& program, const std::string& description)
    : app_(description, program) {
  app_.get_formatter()->column_width(34);
  // An option given twice keeps its last value (scripts append overrides); repeatable
  // options (--set, --param) keep every value. Commands inherit this from the root.
  app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

CLI::App& CommandLine::add_command(CLI::App& parent, const std::string& name,
                                   const std::string& description, std::function<int()> run) {
  CLI::App* command = parent.add_subcommand(name, description);
  command->group("Commands");
  if (run) commands_.emplace_back(command, std::move(run));
  return *command;
}

std::string usage_of(const CLI::App& command) {
  const CLI::App* parent = command.get_parent();
  return command.help(parent ? full_name(*parent) : "");
}

int CommandLine::run(const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 reads from the back
  try {
    app_.parse(reversed);
  } catch (const CLI::Success&) {  // --help (CallForHelp, CallForAllHelp)
    std::cout << usage_of(*chosen_command(app_));
    return 0;
  } catch (const CLI::ExtrasError&) {
    const CLI::App* command = chosen_command(app_);
    const auto extras = command->remaining();
    throw UsageError(describe_unexpected(*command, extras.empty() ? "?" : extras.front()),
                     usage_of(*command));
  } catch (const CLI::ParseError& error) {
    throw UsageError(error.what(), usage_of(*chosen_command(app_)));
  }
  const CLI::App* command = chosen_command(app_);
  for (const auto& [declared, body] : commands_) {
    if (declared != command) continue;
    try {
      return body();
    } catch (const UsageError& error) {
      if (!error.usage().empty()) throw;
      throw UsageError(error.what(), usage_of(*command));
    }
  }
  throw UsageError(
      "`" + full_name(*command) + "` needs a command: " + listed(visible_commands(*command)),
      usage_of(*command));
}

int run_guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& error) {
    std::cerr << "baton: " << error.what() << "\n";
    if (!error.usage().empty()) std::cerr << "\n" << error.usage();
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "baton: error: " << error.what() << "\n";
    return 1;
  }
}

}  // namespace baton_app
