#include "value_typing.h"

#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "baton/error.h"
#include "baton/files.h"

namespace baton {
namespace config_internal {
namespace {

std::string where(const ValueOrigin& origin) {
  return origin.description.empty() ? std::string() : origin.description + ": ";
}

// A whole number: its value, and its canonical text. A number past 64 bits still reads, as
// the nearest 64-bit value (which the range check refuses), its canonical text as written.
bool parse_int(const std::string& text, std::string* canonical, long long* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') return false;
  *canonical = errno == ERANGE ? text : std::to_string(*value);
  return true;
}

// Every integer key is held in 32 bits somewhere between the YAML and its use (a count, a
// step number, a size): the range is applied here, once, for every integer key of every
// section and plugin, so 4294967297 is refused, never cut to 1.
void check_int_range(long long value, const std::string& canonical, const RawValue& raw,
                     const std::string& key_path) {
  constexpr long long kLargest = std::numeric_limits<std::int32_t>::max();
  constexpr long long kSmallest = std::numeric_limits<std::int32_t>::min();
  if (value >= kSmallest && value <= kLargest) return;
  throw ConfigError(where(raw.origin) + key_path + " must be at " +
                    (value > kLargest ? "most " + std::to_string(kLargest)
                                      : "least " + std::to_string(kSmallest)) +
                    " (every integer key is a 32-bit integer), got " + canonical);
}

bool parse_float(const std::string& text, std::string* canonical) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0') return false;
  *canonical = text;
  return true;
}

bool parse_bool(const std::string& text, std::string* canonical) {
  static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "on", "1"};
  static const char* const kFalse[] = {"false", "False", "FALSE", "no", "off", "0"};
  for (const char* word : kTrue) {
    if (text == word) return *canonical = "true", true;
  }
  for (const char* word : kFalse) {
    if (text == word) return *canonical = "false", true;
  }
  return false;
}

// Checks one scalar against an element type; returns its canonical text.
std::string typed_scalar(ParamType element_type, const std::string& text, const RawValue& raw,
                         const std::string& key_path) {
  std::string canonical;
  bool ok = true;
  switch (element_type) {
    case ParamType::kInt:
    case ParamType::kIntList: {
      long long value = 0;
      ok = parse_int(text, &canonical, &value);
      if (ok) check_int_range(value, canonical, raw, key_path);
      break;
    }
    case ParamType::kFloat:
      ok = parse_float(text, &canonical);
      break;
    case ParamType::kBool:
      ok = parse_bool(text, &canonical);
      break;
    case ParamType::kString:
    case ParamType::kStringList:
      canonical = text;
      break;
    case ParamType::kFile:
    case ParamType::kFileList: {
      canonical = text;
      // Found when the configuration is read, not when the run reaches the file. (Empty:
      // the key is not used.)
      if (text.empty()) break;
      const std::string kind = non_regular_kind(text);
      if (!kind.empty()) {
        throw ConfigError(where(raw.origin) + key_path + ": '" + text + "' is " + kind +
                          "; baton reads only regular files: give one");
      }
      if (::access(text.c_str(), R_OK) != 0) {
        const int error = errno;
        throw ConfigError(
            where(raw.origin) + key_path + ": '" + text + "' " +
            (error == ENOENT ? std::string("does not exist")
                             : "cannot be read: " + std::string(std::strerror(error))) +
            (text[0] == '/' ? "" : " (a relative path is taken from the folder baton runs in)"));
      }
      break;
    }
  }
  if (!ok) {
    const char* wanted =
        element_type == ParamType::kIntList ? "int" : param_type_name(element_type);
    throw ConfigError(where(raw.origin) + key_path + ": expected " + wanted + ", got '" + text +
                      "'");
  }
  return canonical;
}

}  // namespace

RawValue raw_value_from_text(const std::string& text, const ValueOrigin& origin,
                             const std::string& key_path) {
  RawValue raw;
  raw.origin = origin;
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    throw ConfigError(where(origin) + key_path + ": cannot parse value '" + text +
                      "': " + error.msg);
  }
  if (node.IsSequence()) {
    raw.is_list = true;
    for (const auto& item : node) {
      if (!item.IsScalar()) {
        throw ConfigError(where(origin) + key_path + ": list items must be plain values in '" +
                          text + "'");
      }
      raw.items.push_back(item.Scalar());
    }
  } else if (node.IsMap()) {
    throw ConfigError(where(origin) + key_path + ": expected a value, got a mapping '" + text +
                      "'");
  } else {
    raw.scalar = node.IsScalar() ? node.Scalar() : std::string();
  }
  return raw;
}

ParamValue typed_value(const ParamSpec& spec, const RawValue& raw, const std::string& key_path) {
  const bool words = spec.type == ParamType::kStringList || spec.type == ParamType::kFileList;
  const bool want_list = words || spec.type == ParamType::kIntList;
  if (words && !raw.is_list) {
    // A single word where a list of words is expected is a list of one (model.cuts: balanced).
    RawValue one = raw;
    one.is_list = true;
    if (!raw.scalar.empty()) one.items = {raw.scalar};
    return typed_value(spec, one, key_path);
  }
  if (want_list != raw.is_list) {
    const std::string got = raw.is_list ? "a list" : "'" + raw.scalar + "'";
    throw ConfigError(where(raw.origin) + key_path + ": expected " + param_type_name(spec.type) +
                      ", got " + got + (want_list ? " (write a list as [a, b])" : ""));
  }
  if (!want_list) {
    return ParamValue(spec.type, typed_scalar(spec.type, raw.scalar, raw, key_path), {},
                      raw.origin);
  }
  std::vector<std::string> items;
  std::string text = "[";
  for (const auto& item : raw.items) {
    items.push_back(typed_scalar(spec.type, item, raw, key_path));
    text += (items.size() > 1 ? ", " : "") + items.back();
  }
  text += "]";
  return ParamValue(spec.type, text, items, raw.origin);
}

ParamValue default_value(const ParamSpec& spec, const std::string& key_path) {
  const ValueOrigin origin{"default"};
  return typed_value(spec, raw_value_from_text(spec.default_value, origin, key_path), key_path);
}

}  // namespace config_internal
}  // namespace baton
