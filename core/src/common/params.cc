#include "baton/params.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "baton/error.h"
#include "baton/suggest.h"

namespace baton {

const char* param_type_name(ParamType type) {
  switch (type) {
    case ParamType::kInt:
      return "int";
    case ParamType::kFloat:
      return "float";
    case ParamType::kBool:
      return "bool";
    case ParamType::kString:
      return "string";
    case ParamType::kIntList:
      return "list of int";
    case ParamType::kStringList:
      return "list of string";
    case ParamType::kFile:
      return "file";
    case ParamType::kFileList:
      return "list of file";
  }
  return "unknown";
}

ParamValue::ParamValue(ParamType type, std::string text, std::vector<std::string> items,
                       ValueOrigin origin)
    : type_(type), text_(std::move(text)), items_(std::move(items)), origin_(std::move(origin)) {}

namespace {

// The values were type-checked when the configuration was resolved, so a failure here is a
// programming error (asking for the wrong type), reported with the value's origin.
[[noreturn]] void wrong_type(const ParamValue& value, const char* wanted) {
  throw ConfigError(std::string("value '") + value.text() + "' (" + value.origin().description +
                    ") is a " + param_type_name(value.type()) + ", read as " + wanted);
}

}  // namespace

std::int64_t ParamValue::as_int() const {
  if (type_ != ParamType::kInt) wrong_type(*this, "int");
  return std::strtoll(text_.c_str(), nullptr, 10);
}

double ParamValue::as_float() const {
  if (type_ != ParamType::kFloat && type_ != ParamType::kInt) wrong_type(*this, "float");
  return std::strtod(text_.c_str(), nullptr);
}

bool ParamValue::as_bool() const {
  if (type_ != ParamType::kBool) wrong_type(*this, "bool");
  return text_ == "true";
}

const std::string& ParamValue::as_string() const {
  if (type_ != ParamType::kString && type_ != ParamType::kFile) wrong_type(*this, "string");
  return text_;
}

std::vector<std::int64_t> ParamValue::as_int_list() const {
  if (type_ != ParamType::kIntList) wrong_type(*this, "list of int");
  std::vector<std::int64_t> out;
  for (const auto& item : items_) out.push_back(std::strtoll(item.c_str(), nullptr, 10));
  return out;
}

std::vector<std::string> ParamValue::as_string_list() const {
  if (type_ != ParamType::kStringList && type_ != ParamType::kFileList) {
    wrong_type(*this, "list of string");
  }
  return items_;
}

const ParamValue& ParamValues::at(const std::string& key) const {
  auto found = values_.find(key);
  if (found != values_.end()) return found->second;
  std::vector<std::string> keys;
  std::string listing;
  for (const auto& entry : values_) {
    keys.push_back(entry.first);
    listing += (listing.empty() ? "" : ", ") + entry.first;
  }
  throw ConfigError("no parameter '" + key + "'" + did_you_mean(key, keys) +
                    "; declared: " + (listing.empty() ? "(none)" : listing));
}

std::chrono::milliseconds ParamValues::get_seconds(const std::string& key,
                                                   const std::string& key_path) const {
  constexpr double kWeek = 7 * 24 * 3600.0;
  const ParamValue& value = at(key);
  const double seconds = value.as_float();
  if (!std::isfinite(seconds) || seconds < 0 || seconds > kWeek) {
    throw ConfigError(value.origin().description + ": " + key_path +
                      " must be a number of seconds from 0 to 604800 (a week), got " +
                      value.text());
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

}  // namespace baton
