// Plugin and section parameter tables. Every plugin declares the keys it accepts (name,
// type, default, doc); the core validates the YAML subtree against that table, rejects
// unknown keys with a suggestion, and prints every option for `baton config defaults`.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "baton/export.h"

namespace baton {

enum class ParamType : std::uint32_t {
  kInt,
  kFloat,
  kBool,
  kString,
  kIntList,     // [1, 2, 3]
  kStringList,  // [a, b]
  // A path to a file baton reads. Held and read as a string; a value that names something
  // other than a regular file (a FIFO, a folder, a device) is refused when the configuration
  // is read, naming the key. (Appended: the values above keep their numbers.)
  kFile,
  kFileList,  // [a.npy, b.npy]
};

BATON_API const char* param_type_name(ParamType type);

// One declared key. Plain C types so a table can be a static array inside a plugin.
// `default_value` is YAML text ("8", "true", "[]", "loopback"); nullptr means required.
struct ParamSpec {
  const char* name;
  ParamType type;
  const char* default_value;
  const char* doc;
};

// Number of entries of a plugin's parameter table; a plugin without parameters passes
// nullptr.
template <std::size_t N>
constexpr std::size_t param_table_size(const ParamSpec (&)[N]) {
  return N;
}
constexpr std::size_t param_table_size(std::nullptr_t) {
  return 0;
}

// Where a value came from, for messages: "run.yaml:12:5", "env BATON_RUN_STEPS",
// "--set run.steps=3", "default".
struct ValueOrigin {
  std::string description;
};

// A resolved, type-checked parameter value. Stored as its canonical text plus parsed forms
// so plugins read it without a YAML library.
class BATON_API ParamValue {
 public:
  ParamValue() = default;
  // `text` is the canonical scalar text; for list types `items` holds the elements and
  // `text` their YAML flow form ("[1, 2]").
  ParamValue(ParamType type, std::string text, std::vector<std::string> items, ValueOrigin origin);

  ParamType type() const { return type_; }
  const std::string& text() const { return text_; }
  const ValueOrigin& origin() const { return origin_; }

  std::int64_t as_int() const;
  double as_float() const;
  bool as_bool() const;
  const std::string& as_string() const;
  std::vector<std::int64_t> as_int_list() const;
  std::vector<std::string> as_string_list() const;

 private:
  ParamType type_ = ParamType::kString;
  std::string text_;
  std::vector<std::string> items_;
  ValueOrigin origin_;
};

// The resolved parameters of one plugin (or section): every declared key is present,
// either from the configuration or from its default.
class BATON_API ParamValues {
 public:
  void set(const std::string& key, ParamValue value) { values_[key] = std::move(value); }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  // Throws ConfigError naming the key and the keys that do exist.
  const ParamValue& at(const std::string& key) const;

  std::int64_t get_int(const std::string& key) const { return at(key).as_int(); }
  double get_float(const std::string& key) const { return at(key).as_float(); }
  bool get_bool(const std::string& key) const { return at(key).as_bool(); }
  const std::string& get_string(const std::string& key) const { return at(key).as_string(); }

  const std::map<std::string, ParamValue>& all() const { return values_; }

  // A float key read as a duration in seconds: finite, 0 to a week. Throws ConfigError
  // naming `key_path` ("transport.params.timeout_s"), the value and where it came from.
  std::chrono::milliseconds get_seconds(const std::string& key, const std::string& key_path) const;

 private:
  std::map<std::string, ParamValue> values_;
};

// One value as written, before it is checked against a table.
struct RawValue {
  bool is_list = false;
  std::string scalar;              // when !is_list
  std::vector<std::string> items;  // when is_list
  ValueOrigin origin;              // "run.yaml:7:3", "env BATON_…", "--set …"
  ValueOrigin key_origin;          // where the key was written (same as origin for overrides)
};

// The unchecked subtree of a plugin's (or model's) `params:` key, in file order.
struct RawParams {
  std::string key_path;  // "schedule.params", for messages
  ValueOrigin origin;    // where the `params:` key itself is, or "default"
  std::vector<std::pair<std::string, RawValue>> entries;
};

// Checks `raw` against a plugin's table: unknown keys (with a suggestion), wrong types,
// missing required keys. Every declared key is present in the result.
BATON_API ParamValues resolve_params(const RawParams& raw, const ParamSpec* table,
                                     std::size_t table_size,
                                     const std::string& owner);  // owner: "schedule plugin '1f1b'"

}  // namespace baton
