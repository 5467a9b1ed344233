#include "cli_args.h"

#include <cstdlib>

#include <algorithm>

#include "baton/suggest.h"

namespace baton_app {

CliArgs::CliArgs(const std::vector<std::string>& args,
                 const std::vector<std::string>& value_options,
                 const std::vector<std::string>& flag_options) {
  auto known = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_inline_value = false;
    const auto equals = name.find('=');
    if (equals != std::string::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
      has_inline_value = true;
    }
    if (known(flag_options, name)) {
      if (has_inline_value) throw UsageError("--" + name + " takes no value");
      flags_.push_back(name);
    } else if (known(value_options, name)) {
      if (!has_inline_value) {
        if (i + 1 >= args.size()) throw UsageError("--" + name + " needs a value");
        value = args[++i];
      }
      values_[name].push_back(value);
    } else {
      std::vector<std::string> all = value_options;
      all.insert(all.end(), flag_options.begin(), flag_options.end());
      throw UsageError("unknown option --" + name + baton::did_you_mean(name, all));
    }
  }
}

bool CliArgs::flag(const std::string& name) const {
  return std::find(flags_.begin(), flags_.end(), name) != flags_.end();
}

std::string CliArgs::value(const std::string& name, const std::string& fallback) const {
  auto found = values_.find(name);
  return found == values_.end() ? fallback : found->second.back();
}

std::vector<std::string> CliArgs::values(const std::string& name) const {
  auto found = values_.find(name);
  return found == values_.end() ? std::vector<std::string>() : found->second;
}

int CliArgs::integer(const std::string& name, int fallback, int low, int high) const {
  if (!has(name)) return fallback;
  const std::string text = value(name);
  char* end = nullptr;
  const long number = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || number < low || number > high) {
    throw UsageError("--" + name + " must be an integer from " + std::to_string(low) + " to " +
                     std::to_string(high) + ", got '" + text + "'");
  }
  return static_cast<int>(number);
}

std::string CliArgs::one_of(const std::string& name, const std::vector<std::string>& allowed,
                            const std::string& fallback) const {
  const std::string chosen = value(name, fallback);
  if (std::find(allowed.begin(), allowed.end(), chosen) != allowed.end()) return chosen;
  std::string list;
  for (const auto& word : allowed) list += (list.empty() ? "" : " or ") + word;
  throw UsageError("--" + name + " must be " + list + ", got '" + chosen + "'" +
                   baton::did_you_mean(chosen, allowed));
}

std::vector<std::string> CliArgs::at_most_one_positional(const std::string& command) const {
  if (positional_.size() > 1) {
    throw UsageError(command + " takes one CONFIG, got '" + positional_[1] + "'");
  }
  return positional_;
}

}  // namespace baton_app
