// A configuration key's declared values: the one place its range, choices and unit are
// written, read by the loader (check), `baton config defaults` and did-you-mean.
#include <cmath>
#include <cstdio>
#include <string>

#include "baton/config.h"
#include "baton/error.h"
#include "baton/suggest.h"

namespace baton {
namespace {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

bool is_number(ParamType type) {
  return type == ParamType::kInt || type == ParamType::kFloat;
}

std::string listed(const std::vector<std::string>& values) {
  std::string text;
  for (const std::string& value : values) text += (text.empty() ? "" : ", ") + value;
  return text;
}

}  // namespace

KeySpec& KeySpec::at_least(double bound) {
  low = bound;
  low_open = false;
  return *this;
}

KeySpec& KeySpec::above(double bound) {
  low = bound;
  low_open = true;
  return *this;
}

KeySpec& KeySpec::at_most(double bound, const char* why) {
  high = bound;
  high_why = why;
  return *this;
}

KeySpec& KeySpec::off(const char* meaning) {
  off_meaning = meaning;
  return *this;
}

KeySpec& KeySpec::one_of(std::vector<std::string> values) {
  choices = std::move(values);
  return *this;
}

KeySpec& KeySpec::in(const char* what) {
  unit = what;
  return *this;
}

KeySpec& KeySpec::hint(const char* text) {
  hint_text = text;
  return *this;
}

std::string KeySpec::range_text() const {
  if (!choices.empty()) {
    return "one of " + listed(choices) +
           (off_meaning.empty() ? "" : ", or empty (" + off_meaning + ")");
  }
  if (!is_number(type) || (!low && !high)) return "";
  const bool whole = type == ParamType::kInt;
  if (whole && off_meaning.empty()) {
    if (low && high) return "from " + number_text(*low) + " to " + number_text(*high) + high_why;
    if (low) return (low_open ? "above " : "at least ") + number_text(*low);
    return "at most " + number_text(*high) + high_why;
  }
  // A whole number whose smallest value is the one that turns it off says so inline.
  if (whole && low && *low == 0 && !low_open && !high) {
    return "at least 0 (0: " + off_meaning + ")";
  }
  // 0 is taken beside the range ("0 (off) or ... from 1"), so a range from 0 reads "above 0".
  std::string text = off_meaning.empty() ? "" : "0 (" + off_meaning + ") or ";
  text += !unit.empty() ? unit : whole ? "a whole number" : "a finite number";
  const bool open = low_open || (!off_meaning.empty() && low && *low == 0);
  if (low) text += (open ? " above " : " from ") + number_text(*low);
  if (high) {
    text += (low ? (open ? " and at most " : " to ") : " at most ") + number_text(*high) + high_why;
  }
  return text;
}

void KeySpec::check(const ParamValue& value, const std::string& key_path) const {
  const std::string where = value.origin().description + ": " + key_path + " must be ";
  const std::string hinted = hint_text.empty() ? "" : "; " + hint_text;
  if (!choices.empty()) {
    const std::string& text = value.as_string();
    if (text.empty() && !off_meaning.empty()) return;
    for (const std::string& choice : choices) {
      if (text == choice) return;
    }
    throw ConfigError(where + range_text() + ", got '" + text + "'" + did_you_mean(text, choices) +
                      hinted);
  }
  if (!is_number(type) || (!low && !high)) return;
  const double number =
      type == ParamType::kInt ? static_cast<double>(value.as_int()) : value.as_float();
  if (number == 0 && !off_meaning.empty()) return;
  const bool below = low && (low_open ? !(number > *low) : !(number >= *low));
  const bool past = high && !(number <= *high);
  if (std::isfinite(number) && !below && !past) return;
  std::string wanted = range_text();
  // A whole number names the bound it crossed: "at least 1", "at most 65536".
  if (type == ParamType::kInt && off_meaning.empty()) {
    wanted = below ? (low_open ? "above " : "at least ") + number_text(*low)
                   : "at most " + number_text(*high) + high_why;
  }
  throw ConfigError(where + wanted + ", got " + value.text() + hinted);
}

}  // namespace baton
