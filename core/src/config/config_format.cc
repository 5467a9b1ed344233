// Printing a resolved configuration (with the origin of every value) and the table of
// every option.
#include <sstream>

#include "baton/config.h"

namespace baton {
namespace {

// YAML needs quotes around text that would otherwise parse differently.
std::string yaml_scalar(const std::string& text) {
  const bool plain = !text.empty() &&
                     text.find_first_of(":#[]{},&*!|>'\"%@`") == std::string::npos &&
                     text.front() != ' ' && text.back() != ' ' && text.front() != '-';
  if (plain) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string value_text(const ParamValue& value) {
  if (value.type() == ParamType::kString || value.type() == ParamType::kFile) {
    return yaml_scalar(value.text());
  }
  if (value.type() != ParamType::kStringList && value.type() != ParamType::kFileList) {
    return value.text();
  }
  const auto items = value.as_string_list();
  std::string text = "[";
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + yaml_scalar(items[i]);
  return text + "]";
}

void write_line(std::ostringstream& out, const std::string& indent, const std::string& key,
                const std::string& value, const std::string& comment) {
  std::string line = indent + key + ": " + value;
  if (line.size() < 40) line.resize(40, ' ');
  out << line << "  # " << comment << "\n";
}

}  // namespace

std::string format_resolved_config(const Config& config) {
  std::ostringstream out;
  out << "# resolved configuration of " << config.source() << "\n";
  for (const auto& section : config_sections()) {
    out << section.name << ":\n";
    const ParamValues& values = config.section(section.name);
    for (const auto& spec : section.keys) {
      const ParamValue& value = values.at(spec.name);
      write_line(out, "  ", spec.name, value_text(value), value.origin().description);
    }
    if (!section.has_plugin_params) continue;
    bool resolved = true;
    try {
      config.plugin_params(section.name);
    } catch (const std::exception&) {
      resolved = false;
    }
    if (resolved) {
      const auto& params = config.plugin_params(section.name).all();
      out << "  params:" << (params.empty() ? " {}" : "") << "\n";
      for (const auto& entry : params) {
        write_line(out, "    ", entry.first, value_text(entry.second),
                   entry.second.origin().description);
      }
    } else {
      const RawParams& raw = config.raw_params(section.name);
      out << "  params:" << (raw.entries.empty() ? " {}" : "") << "  # not checked\n";
      for (const auto& entry : raw.entries) {
        std::string text = entry.second.scalar;
        if (entry.second.is_list) {
          text = "[";
          for (std::size_t i = 0; i < entry.second.items.size(); ++i) {
            text += (i ? ", " : "") + yaml_scalar(entry.second.items[i]);
          }
          text += "]";
        }
        write_line(out, "    ", entry.first, text, entry.second.origin.description);
      }
    }
  }
  return out.str();
}

namespace {

// One key as `baton config defaults` prints it; `values`: the values it takes, in words.
void write_key(std::ostream& out, const ParamSpec& spec, const std::string& key_prefix,
               const std::string& env_section, const std::string& values) {
  out << "  " << key_prefix << spec.name << " (" << param_type_name(spec.type) << ", "
      << (spec.default_value
              ? std::string("default ") + (spec.default_value[0] ? spec.default_value : "\"\"")
              : std::string("required"))
      << ")\n      " << spec.doc;
  if (!values.empty()) out << "\n      values: " << values;
  if (!env_section.empty()) {
    out << "\n      env " << environment_variable_for(env_section, spec.name);
  }
  out << "\n";
}

}  // namespace

std::string format_param_table(const ParamSpec* table, std::size_t size,
                               const std::string& key_prefix, const std::string& env_section) {
  std::ostringstream out;
  for (std::size_t i = 0; i < size; ++i) write_key(out, table[i], key_prefix, env_section, "");
  return out.str();
}

std::string format_config_defaults() {
  std::ostringstream out;
  for (const auto& section : config_sections()) {
    out << section.name << ": " << section.doc << "\n";
    for (const KeySpec& key : section.keys) {
      write_key(out, key, std::string(section.name) + ".", section.name, key.range_text());
    }
    if (section.has_plugin_params) {
      out << "  " << section.name << ".params.* — the selected plugin's parameters (below)\n";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace baton
