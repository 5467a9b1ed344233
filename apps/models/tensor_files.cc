#include "tensor_files.h"

#include <ATen/ATen.h>
#include <torch/serialize.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "baton/error.h"
#include "baton/files.h"

namespace baton_models {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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

at::ScalarType npy_dtype(const std::string& descr, const std::string& where) {
  const std::string type = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;
  if (type.size() < 2) {
    throw baton::ConfigError(where + ": NumPy dtype '" + descr + "' is not one baton reads");
  }
  if (type[0] == '>') {
    throw baton::ConfigError(where + ": big-endian data (" + type +
                             ") is not supported; save it little-endian");
  }
  const std::string code = type.substr(1);
  if (code == "f4") return at::kFloat;
  if (code == "f8") return at::kDouble;
  if (code == "f2") return at::kHalf;
  if (code == "i8") return at::kLong;
  if (code == "i4") return at::kInt;
  if (code == "i2") return at::kShort;
  if (code == "i1") return at::kChar;
  if (code == "u1") return at::kByte;
  if (code == "b1") return at::kBool;
  throw baton::ConfigError(
      where + ": NumPy dtype '" + type +
      "' is not supported (float16/32/64, int8/16/32/64, uint8, uint16, bool)");
}

at::Tensor read_npy(const std::string& bytes, const std::string& where) {
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
  if (header_length > bytes.size() - offset) {
    throw baton::ConfigError(where + ": the .npy header claims " + std::to_string(header_length) +
                             " bytes, but the file has " + std::to_string(bytes.size()) +
                             " in all (truncated?)");
  }
  const std::string header = bytes.substr(offset, header_length);
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
  const bool uint16 = descr.find("u2") != std::string::npos;
  const at::ScalarType dtype = uint16 ? at::kShort : npy_dtype(descr, where);
  const std::size_t data_offset = offset + header_length;
  const std::size_t element = at::elementSize(dtype);
  const std::size_t available = (bytes.size() - data_offset) / element;
  // The element count, checked against what the file holds as it grows: a header claiming
  // a huge shape is refused before anything of that size is allocated.
  std::size_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim != 0 && count > available / static_cast<std::size_t>(dim)) {
      throw baton::ConfigError(where + ": the header's shape " + header_field(header, "shape") +
                               " needs more data than the file's " +
                               std::to_string(bytes.size() - data_offset) +
                               " bytes after the header (truncated?)");
    }
    count *= static_cast<std::size_t>(dim);
  }
  if (count > available) {
    throw baton::ConfigError(where + ": the file is shorter than its header's shape says");
  }
  at::Tensor tensor = at::empty(shape, dtype);
  std::memcpy(tensor.data_ptr(), bytes.data() + data_offset, count * element);
  if (uint16) tensor = tensor.to(at::kInt).bitwise_and(0xFFFF);  // no uint16 in LibTorch 1.13
  return tensor;
}

}  // namespace

at::Tensor read_tensor_file(const std::string& path, const std::string& what) {
  const std::string where = what + " ('" + path + "')";
  const std::string bytes = baton::read_file(path, what);
  if (ends_with(path, ".npy")) return read_npy(bytes, where);
  if (ends_with(path, ".pt") || ends_with(path, ".pth")) {
    try {
      const c10::IValue value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
      if (!value.isTensor()) {
        throw baton::ConfigError(where + ": holds a " + value.tagKind() +
                                 ", not a tensor; save one tensor with torch.save(tensor, path)");
      }
      return value.toTensor();
    } catch (const c10::Error& error) {
      throw baton::ConfigError(where + ": cannot read it as a tensor saved with torch.save: " +
                               error.what_without_backtrace());
    }
  }
  throw baton::ConfigError(where +
                           ": unknown file type; use .npy (numpy.save) or .pt "
                           "(torch.save of one tensor)");
}

at::Tensor read_token_file(const std::string& path, const std::string& format,
                           const std::string& what) {
  const std::string where = what + " ('" + path + "')";
  std::string kind = format;
  if (kind == "auto") kind = ends_with(path, ".npy") ? "npy" : "bytes";
  if (kind == "npy") {
    at::Tensor tokens = read_npy(baton::read_file(path, what), where);
    if (tokens.dim() != 1 || at::isFloatingType(tokens.scalar_type())) {
      throw baton::ConfigError(where + ": a token file must be a 1-D integer array");
    }
    return tokens.to(at::kLong);
  }
  const std::string bytes = baton::read_file(path, what);
  if (kind == "bytes") {
    at::Tensor tokens = at::empty({static_cast<std::int64_t>(bytes.size())}, at::kLong);
    auto* data = tokens.data_ptr<std::int64_t>();
    for (std::size_t i = 0; i < bytes.size(); ++i) data[i] = static_cast<unsigned char>(bytes[i]);
    return tokens;
  }
  const std::size_t width = kind == "uint16" ? 2 : kind == "int32" ? 4 : 0;
  if (width == 0) {
    throw baton::ConfigError(what + ": unknown token format '" + format +
                             "' (auto, bytes, uint16, int32, npy)");
  }
  if (bytes.size() % width != 0) {
    throw baton::ConfigError(where + ": " + std::to_string(bytes.size()) +
                             " bytes is not a whole number of " + kind + " tokens");
  }
  const auto count = static_cast<std::int64_t>(bytes.size() / width);
  at::Tensor tokens = at::empty({count}, at::kLong);
  auto* data = tokens.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < count; ++i) {
    if (width == 2) {
      std::uint16_t value;
      std::memcpy(&value, bytes.data() + i * 2, 2);
      data[i] = value;
    } else {
      std::int32_t value;
      std::memcpy(&value, bytes.data() + i * 4, 4);
      data[i] = value;
    }
  }
  return tokens;
}

}  // namespace baton_models
