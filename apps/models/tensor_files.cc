#include "tensor_files.h"

#include <ATen/ATen.h>
#include <torch/serialize.h>

#include <cstdint>
#include <cstring>

#include "baton/error.h"
#include "baton/files.h"
#include "npy_header.h"
#include "token_stream.h"

namespace baton_models {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The element type of a NumPy type code ("f4", "i8", "u2", ...).
at::ScalarType scalar_type_of(const std::string& code, const std::string& where) {
  if (code == "f4") return at::kFloat;
  if (code == "f8") return at::kDouble;
  if (code == "f2") return at::kHalf;
  if (code == "i8") return at::kLong;
  if (code == "i4") return at::kInt;
  if (code == "i2" || code == "u2") return at::kShort;  // u2 widened below
  if (code == "i1") return at::kChar;
  if (code == "u1") return at::kByte;
  if (code == "b1") return at::kBool;
  throw baton::ConfigError(where + ": NumPy type '" + code + "' has no tensor type");
}

// The header first, checked against the file's size; then the data straight into the tensor.
at::Tensor read_npy(const baton::ReadableFile& file, const std::string& where) {
  const NpyHeader header = read_npy_header(file, where);
  at::Tensor tensor = at::empty(header.shape, scalar_type_of(header.type_code, where));
  file.read_at(header.data_offset, tensor.data_ptr(), header.data_bytes);
  // No uint16 in LibTorch 1.13: read as int16, then widened.
  if (header.type_code == "u2") tensor = tensor.to(at::kInt).bitwise_and(0xFFFF);
  return tensor;
}

}  // namespace

at::Tensor read_tensor_file(const std::string& path, const std::string& what) {
  const std::string where = what + " ('" + path + "')";
  const baton::ReadableFile file = baton::ReadableFile::open(path, what);
  if (ends_with(path, ".npy")) return read_npy(file, where);
  if (ends_with(path, ".pt") || ends_with(path, ".pth")) {
    // torch.save writes a zip file: anything else (a sparse file of zeros) is refused by its
    // first bytes, before the whole of it is read.
    char magic[4] = {};
    if (file.size() >= sizeof magic) file.read_at(0, magic, sizeof magic);
    if (std::memcmp(magic, "PK\x03\x04", 4) != 0) {
      throw baton::ConfigError(where +
                               ": not a file torch.save wrote (no zip header); save one tensor "
                               "with torch.save(tensor, path)");
    }
    const std::string bytes = file.read_all(baton::machine_memory_bytes());
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

at::Tensor read_token_file(const std::string& path, TokenFormat format, const std::string& what) {
  const auto stream = TokenStream::open(path, format, what);
  return stream->window(0, stream->size());
}

}  // namespace baton_models
