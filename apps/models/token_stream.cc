#include "token_stream.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "baton/error.h"
#include "npy_header.h"

namespace baton_models {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::shared_ptr<const TokenStream> TokenStream::open(const std::string& path,
                                                     const std::string& format,
                                                     const std::string& what) {
  const std::string where = what + " ('" + path + "')";
  std::string kind = format;
  if (kind == "auto") kind = ends_with(path, ".npy") ? "npy" : "bytes";
  if (kind != "npy" && kind != "bytes" && kind != "uint16" && kind != "int32") {
    throw baton::ConfigError(what + ": unknown token format '" + format +
                             "' (auto, bytes, uint16, int32, npy)");
  }
  std::shared_ptr<TokenStream> stream(new TokenStream());
  stream->path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw baton::ConfigError(where + ": cannot open it: " + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    throw baton::ConfigError(where + ": not a regular file");
  }
  stream->mapped_bytes_ = static_cast<std::size_t>(status.st_size);
  if (stream->mapped_bytes_ > 0) {
    void* mapping = ::mmap(nullptr, stream->mapped_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      throw baton::ConfigError(where + ": cannot map it into memory: " + std::strerror(error));
    }
    stream->mapping_ = mapping;
    // Windows are read at random offsets: no read-ahead of pages nobody asked for.
    ::madvise(mapping, stream->mapped_bytes_, MADV_RANDOM);
  }
  ::close(fd);
  const auto* bytes = static_cast<const unsigned char*>(stream->mapping_);
  std::size_t data_bytes = stream->mapped_bytes_;
  stream->first_ = bytes;
  if (kind == "npy") {
    const NpyHeader header = parse_npy_header(
        std::string_view(reinterpret_cast<const char*>(bytes), stream->mapped_bytes_), where);
    const std::string& code = header.type_code;
    if (header.shape.size() != 1 || code[0] == 'f' || code == "b1") {
      throw baton::ConfigError(where + ": a token file must be a 1-D integer array");
    }
    stream->first_ = bytes + header.data_offset;
    data_bytes = header.data_bytes;
    stream->width_ = code[1] - '0';
    stream->is_signed_ = code[0] == 'i';
  } else {
    stream->width_ = kind == "bytes" ? 1 : kind == "uint16" ? 2 : 4;
    stream->is_signed_ = kind == "int32";
    if (data_bytes % static_cast<std::size_t>(stream->width_) != 0) {
      throw baton::ConfigError(where + ": " + std::to_string(data_bytes) +
                               " bytes is not a whole number of " + kind + " tokens");
    }
  }
  stream->count_ = static_cast<std::int64_t>(data_bytes / static_cast<std::size_t>(stream->width_));
  return stream;
}

TokenStream::~TokenStream() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapped_bytes_);
}

std::int64_t TokenStream::token(std::int64_t index) const {
  const unsigned char* at = first_ + index * width_;
  switch (width_) {
    case 1:
      if (is_signed_) return static_cast<std::int8_t>(*at);
      return *at;
    case 2: {
      std::uint16_t value;
      std::memcpy(&value, at, 2);
      if (is_signed_) return static_cast<std::int16_t>(value);
      return value;
    }
    case 4: {
      std::uint32_t value;
      std::memcpy(&value, at, 4);
      // Not one ?: expression: its common type would be unsigned.
      if (is_signed_) return static_cast<std::int32_t>(value);
      return value;
    }
    default: {
      std::int64_t value;
      std::memcpy(&value, at, 8);
      return value;
    }
  }
}

at::Tensor TokenStream::window(std::int64_t start, std::int64_t length) const {
  if (start < 0 || length < 0 || start + length > count_) {
    throw baton::Error("token window [" + std::to_string(start) + ", " +
                       std::to_string(start + length) + ") is outside '" + path_ + "' (" +
                       std::to_string(count_) + " tokens)");
  }
  at::Tensor tokens = at::empty({length}, at::kLong);
  auto* data = tokens.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < length; ++i) data[i] = token(start + i);
  return tokens;
}

std::pair<std::int64_t, std::int64_t> TokenStream::id_range() const {
  std::int64_t low = 0, high = 0;
  for (std::int64_t i = 0; i < count_; ++i) {
    const std::int64_t id = token(i);
    if (i == 0 || id < low) low = id;
    if (i == 0 || id > high) high = id;
  }
  return {low, high};
}

}  // namespace baton_models
