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

// A string key's choices, each word paired with its enumerator: the key's declaration takes
// its words from it (KeySpec::one_of(choice_words(...))) and its reader its enumerators, so
// the words are written once.
template <class E>
using Choices = std::vector<std::pair<const char*, E>>;

template <class E>
std::vector<std::string> choice_words(const Choices<E>& choices) {
  std::vector<std::string> words;
  for (const auto& choice : choices) words.emplace_back(choice.first);
  return words;
}

// One of a string key's choices as its enumerator. The configuration took only the declared
// words; one missing from `names` is baton's own mistake, and said to be.
template <class E>
Setting<E> read_choice(const ParamValues& section, const std::string& key,
                       const Choices<E>& names) {
  const ParamValue& value = section.at(key);
  for (const auto& [name, enumerator] : names) {
    if (value.as_string() == name) return {enumerator, value.origin()};
  }
  throw ConfigError(value.origin().description + ": " + key + " '" + value.as_string() +
                    "' is declared but its reader has no meaning for it (a baton bug: report it)");
}

}  // namespace baton
