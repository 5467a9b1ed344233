// Reading a YAML file into a Config: structure and key checks with file:line:column, then
// environment and --set overrides, then typing against the section tables.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string_view>
#include <thread>

#include "baton/config.h"
#include "baton/error.h"
#include "baton/files.h"
#include "baton/plan/shape_limits.h"
#include "baton/suggest.h"
#include "config_front_door.h"
#include "value_typing.h"

extern char** environ;

namespace baton {
namespace {

using config_internal::raw_value_from_text;
using config_internal::typed_value;

const SectionSpec* find_section(const std::string& name) {
  for (const auto& section : config_sections()) {
    if (name == section.name) return &section;
  }
  return nullptr;
}

std::vector<std::string> section_names() {
  std::vector<std::string> names;
  for (const auto& section : config_sections()) names.emplace_back(section.name);
  return names;
}

// "unknown section 'train'; sections: run, world, ..." (with a suggestion when one is close).
std::string unknown_section(const std::string& name) {
  std::string message =
      "unknown section '" + name + "'" + did_you_mean(name, section_names()) + "; sections:";
  const char* separator = " ";
  for (const std::string& section : section_names()) {
    message += separator + section;
    separator = ", ";
  }
  return message;
}

std::vector<std::string> key_names(const SectionSpec& section) {
  std::vector<std::string> names;
  for (const auto& key : section.keys) names.emplace_back(key.name);
  if (section.has_plugin_params) names.emplace_back("params");
  return names;
}

const KeySpec* find_key(const SectionSpec& section, const std::string& key) {
  for (const auto& spec : section.keys) {
    if (key == spec.name) return &spec;
  }
  return nullptr;
}

ValueOrigin origin_of(const std::string& source, const YAML::Mark& mark) {
  return {source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1)};
}

std::string describe_node(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  return "'" + node.Scalar() + "'";
}

// Caps on what one configuration may hold. A real one is a few kilobytes; the caps keep a
// hostile one (an alias of a long string repeated thousands of times, a list of a million
// items, brackets nested a million deep) from costing gigabytes or the stack.
constexpr std::size_t kMaxConfigBytes = 1 << 20;
constexpr std::size_t kMaxValueBytes = 64 << 10;
constexpr std::size_t kMaxListItems = 4096;
constexpr int kMaxFlowNesting = 32;

void check_value_size(const std::string& value, const ValueOrigin& origin,
                      const std::string& key_path) {
  if (value.size() > kMaxValueBytes) {
    throw ConfigError(origin.description + ": " + key_path + ": a value of " +
                      std::to_string(value.size()) + " bytes; values are at most " +
                      std::to_string(kMaxValueBytes) + " bytes");
  }
}

// Brackets nested deeper than any configuration needs, found before the YAML parser
// recurses into them. Quoted text and comments are skipped.
void check_flow_nesting(const std::string& text, const std::string& source) {
  int depth = 0, line = 1;
  char quote = 0;
  bool comment = false;
  for (const char c : text) {
    if (c == '\n') {
      ++line;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    if (c == '#') comment = true;
    if (c == '[' || c == '{') {
      if (++depth > kMaxFlowNesting) {
        throw ConfigError(source + ":" + std::to_string(line) + ": brackets nested more than " +
                          std::to_string(kMaxFlowNesting) + " deep; a configuration needs two");
      }
    }
    if ((c == ']' || c == '}') && depth > 0) --depth;
  }
}

RawValue raw_value_from_node(const YAML::Node& node, const std::string& source,
                             const std::string& key_path) {
  RawValue raw;
  raw.origin = origin_of(source, node.Mark());
  if (node.IsSequence()) {
    raw.is_list = true;
    if (node.size() > kMaxListItems) {
      throw ConfigError(raw.origin.description + ": " + key_path + ": a list of " +
                        std::to_string(node.size()) + " items; lists hold at most " +
                        std::to_string(kMaxListItems));
    }
    std::size_t total = 0;
    for (const auto& item : node) {
      if (!item.IsScalar()) {
        throw ConfigError(origin_of(source, item.Mark()).description + ": " + key_path +
                          ": list items must be plain values, got " + describe_node(item));
      }
      check_value_size(item.Scalar(), origin_of(source, item.Mark()), key_path);
      total += item.Scalar().size();
      if (total > kMaxValueBytes) {
        throw ConfigError(raw.origin.description + ": " + key_path + ": the list holds more " +
                          "than " + std::to_string(kMaxValueBytes) + " bytes in all");
      }
      raw.items.push_back(item.Scalar());
    }
  } else if (node.IsMap()) {
    throw ConfigError(raw.origin.description + ": " + key_path +
                      ": expected a value, got a mapping");
  } else {
    raw.scalar = node.IsScalar() ? node.Scalar() : std::string();
    check_value_size(raw.scalar, raw.origin, key_path);
  }
  return raw;
}

// What the file said, before overrides and typing.
struct WrittenConfig {
  std::map<std::string, std::map<std::string, RawValue>> sections;
  std::map<std::string, RawParams> params;
};

RawParams& params_of(WrittenConfig& written, const std::string& section) {
  auto& params = written.params[section];
  if (params.key_path.empty()) {
    params.key_path = section + ".params";
    params.origin = {"default"};
  }
  return params;
}

void set_param(RawParams& params, const std::string& key, RawValue value) {
  for (auto& entry : params.entries) {
    if (entry.first == key) {
      entry.second = std::move(value);
      return;
    }
  }
  params.entries.emplace_back(key, std::move(value));
}

void read_params_node(const YAML::Node& node, const std::string& source, RawParams& params) {
  params.origin = origin_of(source, node.Mark());
  if (node.IsNull()) return;
  if (!node.IsMap()) {
    throw ConfigError(params.origin.description + ": " + params.key_path +
                      ": expected a mapping of parameters, got " + describe_node(node));
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string key_path = params.key_path + "." + key;
    RawValue value = raw_value_from_node(entry.second, source, key_path);
    value.key_origin = origin_of(source, entry.first.Mark());
    set_param(params, key, std::move(value));
  }
}

// An alias shares its anchor's node, so a walk that follows aliases can visit a node many
// times: ten nested lists of ten aliases are 10^10 visits from 386 bytes. And an alias inside
// its own anchor (`&a [*a]`) makes a cycle that a walk never leaves. Every walk over a
// configuration's nodes counts them against one budget, far above any real configuration and
// far below what takes a noticeable time, and the first walk bounds the depth.
constexpr std::size_t kMaxConfigNodes = 1000000;
constexpr int kMaxConfigDepth = 64;

struct NodeBudget {
  std::size_t visited = 0;

  void visit(const YAML::Node& node, const std::string& source, int depth) {
    if (depth > kMaxConfigDepth) {
      throw ConfigError(origin_of(source, node.Mark()).description + ": values nested more than " +
                        std::to_string(kMaxConfigDepth) +
                        " deep once aliases (*name) are followed; an alias inside its own "
                        "anchor (&a [*a]) never ends: write the values out");
    }
    if (++visited <= kMaxConfigNodes) return;
    throw ConfigError(origin_of(source, node.Mark()).description +
                      ": the configuration expands to more than " +
                      std::to_string(kMaxConfigNodes) +
                      " values once its aliases (*name) are followed; a configuration holds a "
                      "few hundred: write the values out, or alias only plain values");
  }
};

// YAML keeps one of two equal keys in a mapping and drops the other without a word: a
// configuration that says a thing twice is refused, pointing at both.
void refuse_duplicate_keys(const YAML::Node& node, const std::string& source,
                           const std::string& path, NodeBudget& budget, int depth = 0) {
  budget.visit(node, source, depth);
  if (node.IsSequence()) {
    for (const auto& item : node) refuse_duplicate_keys(item, source, path, budget, depth + 1);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, YAML::Mark> seen;
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    const std::string key_path = path.empty() ? key : path + "." + key;
    if (!key.empty()) {
      const auto [first, inserted] = seen.emplace(key, entry.first.Mark());
      if (!inserted) {
        throw ConfigError(origin_of(source, entry.first.Mark()).description + ": duplicate key '" +
                          key_path + "' (first at " + origin_of(source, first->second).description +
                          "); YAML would keep only one of them: say it once");
      }
    } else {
      refuse_duplicate_keys(entry.first, source, key_path, budget, depth + 1);
    }
    refuse_duplicate_keys(entry.second, source, key_path, budget, depth + 1);
  }
}

// YAML::Load reads the first document and ignores the rest; a second one is a mistake (two
// files pasted together). Found by its markers at the start of a line — a '---' after any
// content, or content after '...' — not by YAML::LoadAll, which loops forever on some
// malformed inputs (yaml-cpp 0.7, found by fuzz_config_yaml).
void refuse_second_document(const std::string& text, const std::string& source) {
  bool content = false, ended = false;
  std::size_t line_start = 0;
  for (int line = 1; line_start < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', line_start), text.size());
    const std::string_view row(text.data() + line_start, end - line_start);
    const bool start_marker = row.rfind("---", 0) == 0 && (row.size() == 3 || row[3] == ' ' ||
                                                           row[3] == '\t' || row[3] == '\r');
    const bool end_marker = row.rfind("...", 0) == 0 && (row.size() == 3 || row[3] == ' ');
    const auto first = row.find_first_not_of(" \t\r");
    const bool blank = first == std::string_view::npos || row[first] == '#';
    if ((start_marker && (content || ended)) || (ended && !blank && !start_marker && !end_marker)) {
      throw ConfigError(source + ":" + std::to_string(line) +
                        ":1: a second YAML document (after '" +
                        std::string(start_marker ? "---" : "...") +
                        "'); a configuration is one document, and the second would be ignored");
    }
    if (end_marker) ended = true;
    if (!blank && !start_marker && !end_marker) content = true;
    line_start = end + 1;
  }
}

WrittenConfig read_yaml(const std::string& text, const std::string& source) {
  if (text.size() > kMaxConfigBytes) {
    throw ConfigError(source + ": " + std::to_string(text.size()) +
                      " bytes; a configuration is at most " + std::to_string(kMaxConfigBytes) +
                      " bytes");
  }
  check_flow_nesting(text, source);
  refuse_second_document(text, source);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& error) {
    throw ConfigError(origin_of(source, error.mark).description +
                      ": YAML syntax error: " + error.msg);
  }
  // This walk comes first and bounds the work of every later one (they visit fewer nodes).
  NodeBudget budget;
  refuse_duplicate_keys(root, source, "", budget);
  WrittenConfig written;
  if (root.IsNull()) return written;
  if (!root.IsMap()) {
    throw ConfigError(origin_of(source, root.Mark()).description +
                      ": the configuration must be a mapping of sections (" +
                      "run, world, model, …), got " + describe_node(root));
  }
  for (const auto& section_entry : root) {
    const std::string section_name = section_entry.first.Scalar();
    const SectionSpec* section = find_section(section_name);
    if (section == nullptr) {
      throw ConfigError(origin_of(source, section_entry.first.Mark()).description + ": " +
                        unknown_section(section_name));
    }
    const YAML::Node& body = section_entry.second;
    if (body.IsNull()) continue;
    if (!body.IsMap()) {
      throw ConfigError(origin_of(source, body.Mark()).description + ": section '" + section_name +
                        "' must be a mapping of keys, got " + describe_node(body));
    }
    for (const auto& key_entry : body) {
      const std::string key = key_entry.first.Scalar();
      const std::string key_path = section_name + "." + key;
      if (key == "params" && section->has_plugin_params) {
        read_params_node(key_entry.second, source, params_of(written, section_name));
        continue;
      }
      if (find_key(*section, key) == nullptr) {
        std::string listing;
        for (const auto& name : key_names(*section))
          listing += (listing.empty() ? "" : ", ") + name;
        throw ConfigError(origin_of(source, key_entry.first.Mark()).description +
                          ": unknown key '" + key_path + "'" +
                          did_you_mean(key, key_names(*section)) + "; '" + section_name +
                          "' accepts: " + listing);
      }
      written.sections[section_name][key] = raw_value_from_node(key_entry.second, source, key_path);
    }
  }
  return written;
}

std::string uppercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Applies one override "section.key" or "section.params.key".
void apply_override(WrittenConfig& written, const std::string& key_path, const std::string& text,
                    const ValueOrigin& origin) {
  const auto dot = key_path.find('.');
  const std::string section_name = key_path.substr(0, dot);
  const SectionSpec* section = find_section(section_name);
  if (dot == std::string::npos) {
    throw ConfigError(origin.description + ": '" + key_path +
                      "' is not section.key (for example run.steps)");
  }
  if (section == nullptr) {
    throw ConfigError(origin.description + ": " + unknown_section(section_name));
  }
  const std::string key = key_path.substr(dot + 1);
  const std::string params_prefix = "params.";
  if (section->has_plugin_params && key.rfind(params_prefix, 0) == 0 &&
      key.size() > params_prefix.size()) {
    set_param(params_of(written, section_name), key.substr(params_prefix.size()),
              raw_value_from_text(text, origin, key_path));
    return;
  }
  if (find_key(*section, key) == nullptr) {
    throw ConfigError(origin.description + ": unknown key '" + key_path + "'" +
                      did_you_mean(key, key_names(*section)));
  }
  written.sections[section_name][key] = raw_value_from_text(text, origin, key_path);
}

void apply_environment(WrittenConfig& written) {
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string assignment = *entry;
    const auto equals = assignment.find('=');
    const std::string name = assignment.substr(0, equals);
    const std::string value = equals == std::string::npos ? "" : assignment.substr(equals + 1);
    if (name.rfind("BATON_", 0) != 0) continue;
    for (const auto& section : config_sections()) {
      const std::string prefix = "BATON_" + uppercase(section.name) + "_";
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string rest = name.substr(prefix.size());
      const ValueOrigin origin{"env " + name};
      if (section.has_plugin_params && rest.rfind("PARAMS_", 0) == 0) {
        apply_override(written, std::string(section.name) + ".params." + lowercase(rest.substr(7)),
                       value, origin);
        continue;
      }
      std::vector<std::string> variables;
      for (const auto& key : section.keys) {
        variables.push_back(environment_variable_for(section.name, key.name));
      }
      if (std::find(variables.begin(), variables.end(), name) == variables.end()) {
        throw ConfigError(origin.description + ": no configuration key '" + section.name + "." +
                          lowercase(rest) + "'" + did_you_mean(name, variables));
      }
      apply_override(written, std::string(section.name) + "." + lowercase(rest), value, origin);
    }
  }
}

// What a key's declaration cannot say (KeySpec holds each key's own range and choices):
// the relations between keys, a bound that depends on the machine, what a path may be.
void check_relations(const Config& config) {
  const ParamValue& replicas = config.section("world").at("data_parallel");
  const ParamValue& ranks = config.section("world").at("ranks");
  if (ranks.as_int() % replicas.as_int() != 0) {
    throw ConfigError(
        replicas.origin().description + ": world.data_parallel is " + replicas.text() +
        " but world.ranks is " + ranks.text() + ", which does not split into " + replicas.text() +
        " pipelines of equal size; set world.ranks to a multiple of " + replicas.text() + " (" +
        std::to_string(replicas.as_int() * 2) + " for pipelines of 2 ranks, for example)");
  }
  const std::int64_t actions = config.section("world").get_int("ranks") *
                               config.section("schedule").get_int("stages_per_rank") *
                               config.section("schedule").get_int("microbatches");
  if (actions > kMaxPlanUnits) {
    const ParamValue& microbatches = config.section("schedule").at("microbatches");
    throw ConfigError(microbatches.origin().description +
                      ": world.ranks x schedule.stages_per_rank x schedule.microbatches is " +
                      std::to_string(actions) + ", at most " + std::to_string(kMaxPlanUnits) +
                      " are planned (each is a forward and a backward to schedule)");
  }
  const ParamValue& threads = config.section("run").at("threads");
  const std::int64_t most_threads =
      std::max(64, 8 * static_cast<int>(std::thread::hardware_concurrency()));
  if (threads.as_int() > most_threads) {
    throw ConfigError(threads.origin().description +
                      ": run.threads must be from 0 (automatic) to " +
                      std::to_string(most_threads) + " (8 per CPU here, at least 64), got " +
                      threads.text() + "; each rank starts that many threads");
  }
  const ParamValue& name = config.section("run").at("name");
  const bool control = std::any_of(name.as_string().begin(), name.as_string().end(),
                                   [](unsigned char c) { return c < 0x20 || c == 0x7f; });
  if (name.as_string().empty() || name.as_string() == "." || name.as_string() == ".." ||
      name.as_string().find('/') != std::string::npos || control) {
    throw ConfigError(name.origin().description + ": run.name '" + name.as_string() +
                      "' must be a plain folder name (no '/' or control characters such as a "
                      "newline, not '.' or '..'): it names the "
                      "run's folder inside run.output_dir");
  }
  const ParamValue& device = config.section("world").at("device");
  if (device.as_string() == "cuda" && !BATON_TORCH_CUDA) {
    throw ConfigError(device.origin().description +
                      ": world.device: cuda, but this baton is built against a LibTorch without "
                      "CUDA (" BATON_TORCH_VERSION
                      ", CPU only: Debian's libtorch-dev is), so no "
                      "tensor can be placed on a GPU; build baton against a CUDA LibTorch "
                      "(scripts/gpu-check does, on a machine with a GPU), or use world.device: "
                      "cpu");
  }
  const ParamValue& output_dir = config.section("run").at("output_dir");
  if (output_dir.as_string().empty()) {
    throw ConfigError(output_dir.origin().description +
                      ": run.output_dir is empty; give the folder that receives the run's "
                      "folder (runs, the default, or '.' for the folder baton runs in)");
  }
}

// Every check of a whole configuration, in one order: the relations between core keys, then
// those of the sections a program added.
void check_config(const Config& config) {
  check_relations(config);
  for (const SectionCheck check : config_section_checks()) check(config);
}

Config build_config(WrittenConfig written, const std::string& source,
                    const ConfigOverrides& overrides) {
  if (overrides.use_environment) apply_environment(written);
  for (const auto& assignment : overrides.set) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw ConfigError("--set " + assignment + ": expected key.path=value");
    }
    apply_override(written, assignment.substr(0, equals), assignment.substr(equals + 1),
                   {"--set " + assignment});
  }
  Config config;
  ConfigFrontDoor::set_source(config, source);
  for (const auto& section : config_sections()) {
    ParamValues values;
    const auto& given = written.sections[section.name];
    for (const auto& spec : section.keys) {
      const std::string key_path = std::string(section.name) + "." + spec.name;
      auto found = given.find(spec.name);
      ParamValue value = found != given.end() ? typed_value(spec, found->second, key_path)
                                              : config_internal::default_value(spec, key_path);
      spec.check(value, key_path);
      values.set(spec.name, std::move(value));
    }
    ConfigFrontDoor::set_section(config, section.name, std::move(values));
    if (section.has_plugin_params) {
      ConfigFrontDoor::set_raw_params(config, section.name, params_of(written, section.name));
    }
  }
  check_config(config);
  return config;
}

}  // namespace

std::string environment_variable_for(const std::string& section, const std::string& key) {
  return "BATON_" + uppercase(section) + "_" + uppercase(key);
}

const ParamValues& Config::section(const std::string& name) const {
  auto found = sections_.find(name);
  if (found == sections_.end()) {
    throw ConfigError("no configuration section '" + name + "'" +
                      did_you_mean(name, section_names()));
  }
  return found->second;
}

const RawParams& Config::raw_params(const std::string& section) const {
  auto found = raw_params_.find(section);
  if (found == raw_params_.end()) {
    throw ConfigError("section '" + section + "' has no params subtree");
  }
  return found->second;
}

const ParamValues& Config::plugin_params(const std::string& section) const {
  auto found = plugin_params_.find(section);
  if (found == plugin_params_.end()) {
    throw ConfigError("the parameters of " + section +
                      ".params were not checked against a plugin yet");
  }
  return found->second;
}

Config with_chosen_values(Config config,
                          const std::vector<std::pair<std::string, RawValue>>& values) {
  for (const auto& [key_path, raw] : values) {
    const auto dot = key_path.find('.');
    const SectionSpec* section =
        dot == std::string::npos ? nullptr : find_section(key_path.substr(0, dot));
    const KeySpec* spec =
        section == nullptr ? nullptr : find_key(*section, key_path.substr(dot + 1));
    if (spec == nullptr) {
      throw ConfigError(raw.origin.description + ": no configuration key '" + key_path + "'");
    }
    ParamValue value = typed_value(*spec, raw, key_path);
    spec->check(value, key_path);
    ConfigFrontDoor::section_to_change(config, section->name).set(spec->name, std::move(value));
  }
  check_config(config);
  return config;
}

Config with_section_params(Config config, const std::string& section, const ParamSpec* table,
                           std::size_t table_size, const std::string& owner) {
  ParamValues checked = resolve_params(config.raw_params(section), table, table_size, owner);
  ConfigFrontDoor::set_plugin_params(config, section, std::move(checked));
  return config;
}

Config load_config_text(const std::string& yaml_text, const std::string& source_name,
                        const ConfigOverrides& overrides) {
  return build_config(read_yaml(yaml_text, source_name), source_name, overrides);
}

Config load_config_file(const std::string& path, const ConfigOverrides& overrides) {
  // A directory reads as empty (the embedded default, "valid"); a FIFO or a device would
  // block or never end: ReadableFile refuses both before reading.
  std::string text;
  try {
    const ReadableFile file = ReadableFile::open(path, "configuration file");
    // Read at most one byte more than a configuration may hold: a huge file is refused by
    // its size, not read whole.
    text.resize(
        static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), kMaxConfigBytes + 1)));
    file.read_at(0, text.data(), text.size());
  } catch (const Error& error) {  // ReadableFile's: the file cannot be read as one
    throw ConfigError(std::string(error.what()) + "; give the path of a .yaml file");
  }
  return load_config_text(text, path, overrides);
}

ParamValues resolve_params(const RawParams& raw, const ParamSpec* table, std::size_t table_size,
                           const std::string& owner) {
  std::vector<std::string> declared;
  for (std::size_t i = 0; i < table_size; ++i) declared.emplace_back(table[i].name);
  ParamValues values;
  for (const auto& entry : raw.entries) {
    const std::string key_path = raw.key_path + "." + entry.first;
    const ParamSpec* spec = nullptr;
    for (std::size_t i = 0; i < table_size; ++i) {
      if (entry.first == table[i].name) spec = &table[i];
    }
    if (spec == nullptr) {
      std::string listing;
      for (const auto& name : declared) listing += (listing.empty() ? "" : ", ") + name;
      const ValueOrigin& where = entry.second.key_origin.description.empty()
                                     ? entry.second.origin
                                     : entry.second.key_origin;
      throw ConfigError(where.description + ": unknown key '" + key_path + "'" +
                        did_you_mean(entry.first, declared) + "; " + owner +
                        " accepts: " + (listing.empty() ? "no parameters" : listing));
    }
    values.set(spec->name, typed_value(*spec, entry.second, key_path));
  }
  for (std::size_t i = 0; i < table_size; ++i) {
    const ParamSpec& spec = table[i];
    if (values.has(spec.name)) continue;
    const std::string key_path = raw.key_path + "." + spec.name;
    if (spec.default_value == nullptr) {
      throw ConfigError(raw.origin.description + ": " + key_path + " is required by " + owner +
                        ": " + spec.doc);
    }
    values.set(spec.name, config_internal::default_value(spec, key_path));
  }
  return values;
}

}  // namespace baton
