#include "sizes.h"

#include <cctype>
#include <sstream>

#include "command_line.h"

namespace baton_app {

namespace {

[[noreturn]] void bad_size(const std::string& item, const std::string& why) {
  throw UsageError("--sizes: '" + item + "' " + why +
                   "; expected sizes such as 1K,64K,1M,16M,64M (K = 1024 bytes)");
}

std::size_t parse_one(const std::string& item) {
  std::size_t digits = 0;
  while (digits < item.size() && std::isdigit(static_cast<unsigned char>(item[digits]))) ++digits;
  if (digits == 0) bad_size(item, "is not a size");
  if (digits > 10) bad_size(item, "is too large");
  const unsigned long long number = std::stoull(item.substr(0, digits));
  std::string unit = item.substr(digits);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned long long multiplier = 1;
  if (unit.empty() || unit == "B") {
    multiplier = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KIB") {
    multiplier = 1ULL << 10;
  } else if (unit == "M" || unit == "MB" || unit == "MIB") {
    multiplier = 1ULL << 20;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    multiplier = 1ULL << 30;
  } else {
    bad_size(item, "has an unknown unit '" + item.substr(digits) + "'");
  }
  if (number == 0) bad_size(item, "is zero");
  if (number > kMaxBenchMessageBytes / multiplier) {
    bad_size(item, "is larger than the bench allows (" +
                       format_message_size(kMaxBenchMessageBytes) + ")");
  }
  return static_cast<std::size_t>(number * multiplier);
}

}  // namespace

std::vector<std::size_t> parse_message_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    // Tolerate "1K, 64K" (quoted on the shell) but not empty items ("1K,,64K").
    const auto first = item.find_first_not_of(' ');
    const auto last = item.find_last_not_of(' ');
    if (first == std::string::npos) bad_size(item, "is empty");
    sizes.push_back(parse_one(item.substr(first, last - first + 1)));
  }
  if (sizes.empty() || (!text.empty() && text.back() == ',')) {
    throw UsageError("--sizes: expected a comma-separated list such as 1K,64K,1M,16M,64M, got '" +
                     text + "'");
  }
  return sizes;
}

std::string format_message_size(std::size_t bytes) {
  const char* const units[] = {"G", "M", "K"};
  const unsigned shifts[] = {30, 20, 10};
  for (int i = 0; i < 3; ++i) {
    const std::size_t unit = std::size_t{1} << shifts[i];
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + units[i];
  }
  return std::to_string(bytes);
}

}  // namespace baton_app
