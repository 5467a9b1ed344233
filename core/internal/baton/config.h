// The run configuration: one YAML file, then environment overrides (BATON_<SECTION>_<KEY>),
// then command-line overrides (--set section.key=value). Every key is declared in a table
// (the core's sections, or the selected plugin's parameters); unknown keys are errors that
// name the key path, the file:line:column, and the nearest valid key.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/params.h"

namespace baton {

// One declared configuration section ("run", "world", …).
struct SectionSpec {
  const char* name;
  const char* doc;
  std::vector<ParamSpec> keys;
  // Whether the section has a `params:` subtree validated against a plugin's table.
  bool has_plugin_params;
};

class Config;

// Checks the values of sections a program added, once the whole configuration is resolved;
// throws ConfigError naming the value's origin.
using SectionCheck = void (*)(const Config& config);

// Every section, in the order they are printed: the core's (run, world, schedule, transport,
// validation, plugins), then those added with add_config_sections.
BATON_API const std::vector<SectionSpec>& config_sections();
BATON_API const std::vector<SectionCheck>& config_section_checks();

// Declares the sections of a program's own components (its model, data, optimizer, …),
// with an optional `check`. Call once, before any configuration is read; a section name
// declared twice is an Error.
BATON_API void add_config_sections(const std::vector<SectionSpec>& sections,
                                   SectionCheck check = nullptr);

// Overrides given on the command line: "schedule.microbatches=8".
struct ConfigOverrides {
  std::vector<std::string> set;  // each "key.path=value"
  bool use_environment = true;   // read BATON_<SECTION>_<KEY>
};

class BATON_API Config {
 public:
  // Path of the YAML file, or "<embedded default>".
  const std::string& source() const { return source_; }

  // Every declared key of `section` (given or default). Throws ConfigError for an unknown
  // section name.
  const ParamValues& section(const std::string& name) const;

  // The raw `params:` subtree of a section that has one, not yet checked.
  const RawParams& raw_params(const std::string& section) const;

  // The checked parameters of a section's plugin, once resolve_plugin_params() ran.
  const ParamValues& plugin_params(const std::string& section) const;
  void set_plugin_params(const std::string& section, ParamValues values);

  // Replaces one declared key's value after loading (schedule: auto puts its choice in).
  // Throws ConfigError for an unknown section.
  void set_value(const std::string& section, const std::string& key, ParamValue value);

  // The loader's: it fills the sections as it reads them.
  std::map<std::string, ParamValues>& mutable_sections() { return sections_; }
  std::map<std::string, RawParams>& mutable_raw_params() { return raw_params_; }
  void set_source(std::string source) { source_ = std::move(source); }

 private:
  std::string source_;
  std::map<std::string, ParamValues> sections_;
  std::map<std::string, RawParams> raw_params_;
  std::map<std::string, ParamValues> plugin_params_;
};

// Loads and checks a YAML file plus overrides. Throws ConfigError.
BATON_API Config load_config_file(const std::string& path, const ConfigOverrides& overrides = {});
// Same, from YAML text; `source_name` is used in messages ("<embedded default>").
BATON_API Config load_config_text(const std::string& yaml_text, const std::string& source_name,
                                  const ConfigOverrides& overrides = {});

// The environment variable that overrides `section.key`: BATON_SCHEDULE_MICROBATCHES.
BATON_API std::string environment_variable_for(const std::string& section, const std::string& key);

// YAML text of the resolved configuration, each value annotated with where it came from.
BATON_API std::string format_resolved_config(const Config& config);

// Every option of every section, with type, default and doc.
BATON_API std::string format_config_defaults();

// One parameter table as text: "  <prefix>name (type, default x)\n      doc\n      env …".
// `env_section` empty: no environment variable line.
BATON_API std::string format_param_table(const ParamSpec* table, std::size_t size,
                                         const std::string& key_prefix,
                                         const std::string& env_section);

}  // namespace baton
