// Internal: the only writer of a Config (its friend). The loader fills a Config through it,
// and so do the functions that change one after loading (with_chosen_values,
// with_section_params, resolve_plugins): each types and checks what it writes first.
#pragma once

#include <string>
#include <utility>

#include "baton/config.h"

namespace baton {

class ConfigFrontDoor {
 public:
  static void set_source(Config& config, std::string source) { config.source_ = std::move(source); }
  static void set_section(Config& config, const std::string& section, ParamValues values) {
    config.sections_[section] = std::move(values);
  }
  static void set_raw_params(Config& config, const std::string& section, RawParams raw) {
    config.raw_params_[section] = std::move(raw);
  }
  static void set_plugin_params(Config& config, const std::string& section, ParamValues values) {
    config.plugin_params_[section] = std::move(values);
  }
  static ParamValues& section_to_change(Config& config, const std::string& section) {
    return config.sections_.at(section);
  }
};

}  // namespace baton
