// A token file mapped into memory and read a window at a time: a multi-GiB file costs no
// resident memory up front, and a rank touches only the pages of the windows it reads.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace baton_models {

class TokenStream {
 public:
  // `format`: "bytes" (a text read as bytes), "uint16" or "int32" (raw little-endian), "npy"
  // (a 1-D integer array), or "auto" (.npy -> npy, else bytes). Throws baton::ConfigError
  // naming `what` (e.g. "data.tokens") and the file, and what is wrong.
  static std::shared_ptr<const TokenStream> open(const std::string& path, const std::string& format,
                                                 const std::string& what);
  ~TokenStream();
  TokenStream(const TokenStream&) = delete;
  TokenStream& operator=(const TokenStream&) = delete;

  std::int64_t size() const { return count_; }
  std::int64_t file_bytes() const { return static_cast<std::int64_t>(mapped_bytes_); }
  const std::string& path() const { return path_; }

  // Tokens [start, start + length) as int64 (a copy: the mapping stays read-only).
  at::Tensor window(std::int64_t start, std::int64_t length) const;
  // The smallest and largest token id; reads the whole file.
  std::pair<std::int64_t, std::int64_t> id_range() const;

 private:
  TokenStream() = default;
  std::int64_t token(std::int64_t index) const;

  std::string path_;
  void* mapping_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  const unsigned char* first_ = nullptr;  // the first token
  int width_ = 1;                         // bytes per token
  bool is_signed_ = false;
  std::int64_t count_ = 0;
};

}  // namespace baton_models
