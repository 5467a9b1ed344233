#include "input_declaration.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "baton/error.h"
#include "baton/suggest.h"

namespace baton_models {
namespace {

// A size no machine here could hold is a typo, not a model.
constexpr std::int64_t kLargestExtent = 1 << 24;
constexpr std::int64_t kLargestSample = std::int64_t{1} << 30;

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

bool parse_count(const std::string& text, std::int64_t* value) {
  const std::string digits = trimmed(text);
  if (digits.empty() || digits.size() > 12) return false;
  for (const char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  *value = std::strtoll(digits.c_str(), nullptr, 10);
  return true;
}

bool is_integer_dtype(const std::string& dtype) {
  return dtype == "int64" || dtype == "int32" || dtype == "int16" || dtype == "int8" ||
         dtype == "uint8";
}

}  // namespace

const std::vector<std::string>& input_dtype_names() {
  static const std::vector<std::string> names = {"float32", "float64", "float16", "bfloat16",
                                                 "int64",   "int32",   "int16",   "int8",
                                                 "uint8",   "bool"};
  return names;
}

InputDeclaration parse_input_declaration(const std::string& text, const std::string& where) {
  const std::string form =
      " (write DTYPE[SHAPE] or DTYPE[SHAPE]<HIGH for integers, e.g. \"int64[32]<256\" for 32 "
      "token ids below 256, \"bool[32]\", \"float32[3, 64]\"; SHAPE is one sample's, without "
      "the batch dimension)";
  const auto open = text.find('[');
  const auto close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    throw baton::ConfigError(where + ": '" + text + "' is not an input declaration" + form);
  }
  InputDeclaration declaration;
  declaration.dtype = trimmed(text.substr(0, open));
  const auto& names = input_dtype_names();
  if (std::find(names.begin(), names.end(), declaration.dtype) == names.end()) {
    throw baton::ConfigError(where + ": '" + text + "': unknown dtype '" + declaration.dtype + "'" +
                             baton::did_you_mean(declaration.dtype, names) +
                             "; one of float32, float64, float16, bfloat16, int64, int32, "
                             "int16, int8, uint8, bool");
  }
  const std::string extents = text.substr(open + 1, close - open - 1);
  std::size_t start = 0;
  while (start <= extents.size() && !trimmed(extents).empty()) {
    const auto comma = extents.find(',', start);
    const std::string item =
        extents.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::int64_t extent = 0;
    if (!parse_count(item, &extent) || extent < 1 || extent > kLargestExtent) {
      throw baton::ConfigError(where + ": '" + text + "': every extent must be a whole number " +
                               "from 1 to " + std::to_string(kLargestExtent) + ", got '" +
                               trimmed(item) + "'" + form);
    }
    declaration.shape.push_back(extent);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  // Each extent may be fine and their product not: [16777216, 16777216] passed, then failed in
  // LibTorch's allocator with a stack.
  std::int64_t elements = 1;
  for (const std::int64_t extent : declaration.shape) {
    if (elements > kLargestSample / extent) {
      throw baton::ConfigError(where + ": '" + text + "': one sample would hold more than " +
                               std::to_string(kLargestSample) + " elements; is an extent a typo?" +
                               form);
    }
    elements *= extent;
  }
  const std::string rest = trimmed(text.substr(close + 1));
  if (!rest.empty()) {
    if (rest[0] != '<' || !parse_count(rest.substr(1), &declaration.high) || declaration.high < 1 ||
        declaration.high > (std::int64_t{1} << 40)) {
      throw baton::ConfigError(where + ": '" + text + "': after the shape only <HIGH may follow, " +
                               "a whole number ≥ 1" + form);
    }
    if (!is_integer_dtype(declaration.dtype)) {
      throw baton::ConfigError(where + ": '" + text + "': <HIGH bounds integer inputs; a " +
                               declaration.dtype + " input is drawn " +
                               (declaration.dtype == "bool" ? "as true/false" : "from randn") +
                               ", so leave it out");
    }
  }
  return declaration;
}

std::string format_input_declaration(const InputDeclaration& declaration) {
  std::string text = declaration.dtype + "[";
  for (std::size_t i = 0; i < declaration.shape.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(declaration.shape[i]);
  }
  text += "]";
  if (declaration.high > 0) text += "<" + std::to_string(declaration.high);
  return text;
}

}  // namespace baton_models
