// The run configuration: one YAML file, then environment overrides (BATON_<SECTION>_<KEY>),
// then command-line overrides (--set section.key=value). Every key is declared in a table
// (the core's sections, or the selected plugin's parameters); unknown keys are errors that
// name the key path, the file:line:column, and the nearest valid key.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/export.h"
#include "baton/params.h"

namespace baton {

// One declared configuration key: a plugin table's four fields (name, type, default, doc)
// and the values it takes. Every check of a key's own value comes from here — when the
// configuration is read, in `baton config defaults`, in did-you-mean — so a key is declared
// once; what relates two keys stays in its section's check. Declared as
//   KeySpec{"steps", ParamType::kInt, "20", "Training steps."}.at_least(1)
struct BATON_API KeySpec : ParamSpec {
  KeySpec(const char* key_name, ParamType key_type, const char* default_text, const char* key_doc)
      : ParamSpec{key_name, key_type, default_text, key_doc} {}

  // Numbers: the smallest value (`at_least`) or the bound it must exceed (`above`), the
  // largest (`at_most`, `why` says where the bound comes from: " (a week)").
  KeySpec& at_least(double low);
  KeySpec& above(double low);
  KeySpec& at_most(double high, const char* why = "");
  // The value that turns the key off ("off", "no limit", "automatic"): 0 for a number, taken
  // even outside the range; "" for a string, taken beside the choices.
  KeySpec& off(const char* meaning);
  // Strings: the only values (did-you-mean suggests among them).
  KeySpec& one_of(std::vector<std::string> values);
  // What a number counts ("seconds", "MiB"), for messages and `baton config defaults`.
  KeySpec& in(const char* what);
  // Said after a refusal: why the range is what it is, or what usually suits.
  KeySpec& hint(const char* text);

  // The values it takes, in words: "at least 1", "one of cpu, cuda", "0 (off) or a number
  // of seconds from 1 to 604800 (a week)"; empty when any value of its type is taken.
  std::string range_text() const;
  // Throws ConfigError naming the value's origin and `key_path` when `value` is outside.
  void check(const ParamValue& value, const std::string& key_path) const;

  std::optional<double> low;
  bool low_open = false;
  std::optional<double> high;
  std::string high_why;
  std::string off_meaning;
  std::vector<std::string> choices;
  std::string unit;
  std::string hint_text;
};

// One declared configuration section ("run", "world", …).
struct SectionSpec {
  const char* name;
  const char* doc;
  std::vector<KeySpec> keys;
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

  // The checked parameters of a section's plugin, once resolve_plugins() or
  // with_section_params() ran.
  const ParamValues& plugin_params(const std::string& section) const;

  // Written only by the front door (core/src/config: the loader, with_chosen_values,
  // with_section_params, resolve_plugins), so every value in it was typed and checked.
 private:
  friend class ConfigFrontDoor;

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

// `config` with values chosen after loading (schedule: auto's choice), each "section.key"
// typed and range-checked as a YAML value is, then the whole configuration checked again.
// Each RawValue's origin says who chose it. Throws ConfigError.
BATON_API Config with_chosen_values(Config config,
                                    const std::vector<std::pair<std::string, RawValue>>& values);

// `config` with the `params:` subtree of `section` checked against `table` (the parameters of
// what `owner` names: "model 'gpt'") and stored as its plugin_params. Throws ConfigError.
BATON_API Config with_section_params(Config config, const std::string& section,
                                     const ParamSpec* table, std::size_t table_size,
                                     const std::string& owner);

// Whether schedule.name is `auto`: the run measures the model and chooses the schedule, its
// stages per rank and microbatches when it starts (docs/auto.md), so no schedule plugin is
// loaded before. The one place the word is tested.
BATON_API bool schedule_chosen_at_start(const Config& config);

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
