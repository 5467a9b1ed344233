#include "npy_header.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "baton/error.h"

namespace baton_models {
namespace {

// The value of 'key' in the .npy header dict: "{'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), }"; empty when absent or malformed.
std::string header_field(const std::string& header, const std::string& key) {
  const std::size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  const std::size_t colon = header.find(':', at);
  if (colon == std::string::npos) return "";
  std::size_t start = colon + 1;
  while (start < header.size() && header[start] == ' ') ++start;
  if (start >= header.size()) return "";
  std::size_t end = std::string::npos;
  if (header[start] == '(') {
    end = header.find(')', start);
    if (end != std::string::npos) ++end;
  } else if (header[start] == '\'') {
    end = header.find('\'', start + 1);
    if (end != std::string::npos) ++end;
  } else {
    end = header.find_first_of(",}", start);
  }
  if (end == std::string::npos) return "";
  return header.substr(start, end - start);
}

// "(3, 4)" -> {3, 4}; "()" -> {} (a scalar). Throws naming the text when it is not a shape.
std::vector<std::int64_t> parse_shape(const std::string& text, const std::string& where) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    throw baton::ConfigError(where + ": the .npy header has no readable 'shape' (got '" +
                             text.substr(0, 64) + "')");
  }
  std::vector<std::int64_t> shape;
  std::stringstream parts(text.substr(1, text.size() - 2));
  for (std::string part; std::getline(parts, part, ',');) {
    const std::size_t first = part.find_first_not_of(' ');
    if (first == std::string::npos) continue;  // "(3,)"
    const std::size_t last = part.find_last_not_of(' ');
    const std::string digits = part.substr(first, last - first + 1);
    if (digits.empty() || digits.size() > 15 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      throw baton::ConfigError(where + ": the .npy header's shape " + text.substr(0, 64) +
                               " has a dimension that is not a size: '" + digits.substr(0, 32) +
                               "'");
    }
    shape.push_back(std::stoll(digits));
  }
  return shape;
}

// The type code of a descr ("'<f4'" -> "f4") and its element size; refuses big-endian
// data and types baton does not read.
std::string type_code_of(const std::string& descr, const std::string& where,
                         std::size_t* element_size) {
  const std::string type = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;
  if (type.size() < 2) {
    throw baton::ConfigError(where + ": NumPy dtype '" + descr + "' is not one baton reads");
  }
  if (type[0] == '>') {
    throw baton::ConfigError(where + ": big-endian data (" + type +
                             ") is not supported; save it little-endian");
  }
  const std::string code = type.substr(1);
  static const struct {
    const char* code;
    std::size_t size;
  } kTypes[] = {{"f4", 4}, {"f8", 8}, {"f2", 2}, {"i8", 8}, {"i4", 4},
                {"i2", 2}, {"u2", 2}, {"i1", 1}, {"u1", 1}, {"b1", 1}};
  for (const auto& known : kTypes) {
    if (code == known.code) {
      *element_size = known.size;
      return code;
    }
  }
  throw baton::ConfigError(
      where + ": NumPy dtype '" + type +
      "' is not supported (float16/32/64, int8/16/32/64, uint8, uint16, bool)");
}

}  // namespace

NpyHeader parse_npy_header(std::string_view bytes, std::uint64_t file_size,
                           const std::string& where) {
  if (file_size < bytes.size()) file_size = bytes.size();
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    throw baton::ConfigError(where + ": not a NumPy .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_length = 0, offset = 0;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) |
                    (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      throw baton::ConfigError(where + ": the .npy file ends inside its header");
    }
    std::uint32_t length = 0;
    std::memcpy(&length, bytes.data() + 8, 4);
    header_length = length;
    offset = 12;
  } else {
    throw baton::ConfigError(where + ": .npy format version " + std::to_string(major) +
                             " is not one baton reads (1, 2 or 3)");
  }
  if (header_length > file_size - offset) {
    throw baton::ConfigError(where + ": the .npy header claims " + std::to_string(header_length) +
                             " bytes, but the file has " + std::to_string(file_size) +
                             " in all (truncated?)");
  }
  if (header_length > bytes.size() - offset) {
    throw baton::ConfigError(where + ": the .npy header claims " + std::to_string(header_length) +
                             " bytes; baton reads headers of at most " +
                             std::to_string(kNpyHeadBytes) + " (numpy.save writes a few dozen)");
  }
  const std::string header(bytes.substr(offset, header_length));
  const std::string descr = header_field(header, "descr");
  if (descr.empty()) {
    throw baton::ConfigError(where + ": the .npy header has no readable 'descr' (dtype)");
  }
  if (header_field(header, "fortran_order") == "True") {
    throw baton::ConfigError(where +
                             ": Fortran-ordered arrays are not supported; save with "
                             "numpy.ascontiguousarray");
  }
  const std::vector<std::int64_t> shape = parse_shape(header_field(header, "shape"), where);
  std::size_t element = 0;
  NpyHeader parsed;
  parsed.type_code = type_code_of(descr, where, &element);
  const std::size_t data_offset = offset + header_length;
  const std::uint64_t available = (file_size - data_offset) / element;
  // The element count, checked against what the file holds as it grows: a header claiming
  // a huge shape is refused before anything of that size is allocated.
  std::size_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim != 0 && count > available / static_cast<std::size_t>(dim)) {
      throw baton::ConfigError(where + ": the header's shape " + header_field(header, "shape") +
                               " needs more data than the file's " +
                               std::to_string(file_size - data_offset) +
                               " bytes after the header (truncated?)");
    }
    count *= static_cast<std::size_t>(dim);
  }
  if (count > available) {
    throw baton::ConfigError(where + ": the file is shorter than its header's shape says");
  }
  parsed.shape = shape;
  parsed.data_offset = data_offset;
  parsed.data_bytes = count * element;
  return parsed;
}

NpyHeader read_npy_header(const baton::ReadableFile& file, const std::string& where) {
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), kNpyHeadBytes)),
                   '\0');
  file.read_at(0, head.data(), head.size());
  return parse_npy_header(head, file.size(), where);
}

}  // namespace baton_models
