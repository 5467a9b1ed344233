// A setting as its reader made it: the typed value and where it was written. The configuration
// checked the value against its declaration (KeySpec) when it was read; a reader turns it into
// its type once, so nothing downstream parses or checks its text again, and an error found
// later (no such GPU, a cut beyond the model, a file that will not open) still names the
// file:line the value came from.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/error.h"
#include "baton/params.h"

namespace baton {

template <class T>
struct Setting {
  T value{};
  ValueOrigin origin;  // "run.yaml:12:10", "--set model.cuts=[2]", "default"

  // The origin, to begin a message with.
  const std::string& where() const { return origin.description; }
};

// `section`'s `key` as a T: bool, a whole number, a floating-point number, a string, or a list
// of strings (file lists included).
template <class T>
Setting<T> read_setting(const ParamValues& section, const std::string& key) {
  const ParamValue& value = section.at(key);
  Setting<T> setting;
  setting.origin = value.origin();
  if constexpr (std::is_same_v<T, bool>) {
    setting.value = value.as_bool();
  } else if constexpr (std::is_integral_v<T>) {
    setting.value = static_cast<T>(value.as_int());
  } else if constexpr (std::is_floating_point_v<T>) {
    setting.value = static_cast<T>(value.as_float());
  } else if constexpr (std::is_same_v<T, std::string>) {
    setting.value = value.as_string();
  } else {
    static_assert(std::is_same_v<T, std::vector<std::string>>,
                  "read_setting reads bool, numbers, strings and string lists; parse other "
                  "types with read_parsed_setting");
    setting.value = value.as_string_list();
  }
  return setting;
}

// `section`'s `key` through `parse(const ParamValue&)`, which throws ConfigError naming the
// value's origin for what the declaration could not say (a list of words or indices).
template <class Parse>
auto read_parsed_setting(const ParamValues& section, const std::string& key, Parse parse)
    -> Setting<decltype(parse(section.at(key)))> {
  const ParamValue& value = section.at(key);
  return {parse(value), value.origin()};
}

// One of a string key's declared choices as an enumerator. `names` pairs each choice the
// declaration lists (KeySpec::one_of) with its enumerator; a choice left out of `names` is
// baton's own mistake, and said to be.
template <class E>
Setting<E> read_choice(const ParamValues& section, const std::string& key,
                       const std::vector<std::pair<const char*, E>>& names) {
  const ParamValue& value = section.at(key);
  for (const auto& [name, enumerator] : names) {
    if (value.as_string() == name) return {enumerator, value.origin()};
  }
  throw ConfigError(value.origin().description + ": " + key + " '" + value.as_string() +
                    "' is declared but its reader has no meaning for it (a baton bug: report it)");
}

// A list as YAML writes it on one line, for messages: "[2, 5]".
inline std::string flow_text(const std::vector<std::string>& items) {
  std::string text = "[";
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text + "]";
}

}  // namespace baton
