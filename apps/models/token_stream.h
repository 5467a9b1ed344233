// A token file read a window at a time: a multi-GiB file costs no resident memory up front,
// and a rank reads only the windows it uses. Read with pread, not a memory map: a file that
// shrinks during a run gives an error naming it, where a map's read past the end is SIGBUS.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "baton/files.h"
#include "model_settings.h"

namespace baton_models {

class TokenStream {
 public:
  // `format`: bytes (a text read as bytes), uint16 or int32 (raw little-endian), npy (a 1-D
  // integer array), or by suffix (.npy -> npy, else bytes). Throws baton::ConfigError naming
  // `what` (e.g. "data.tokens") and the file, and what is wrong.
  static std::shared_ptr<const TokenStream> open(const std::string& path, TokenFormat format,
                                                 const std::string& what);
  TokenStream(const TokenStream&) = delete;
  TokenStream& operator=(const TokenStream&) = delete;

  std::int64_t size() const { return count_; }
  std::int64_t file_bytes() const { return static_cast<std::int64_t>(file_.size()); }
  const std::string& path() const { return path_; }

  // Tokens [start, start + length) as int64.
  at::Tensor window(std::int64_t start, std::int64_t length) const;
  // The smallest and largest token id; reads the whole file.
  std::pair<std::int64_t, std::int64_t> id_range() const;

 private:
  explicit TokenStream(baton::ReadableFile file) : file_(std::move(file)) {}
  // Tokens [start, start + count) decoded into `into`.
  void read_tokens(std::int64_t start, std::int64_t count, std::int64_t* into) const;

  std::string path_;
  baton::ReadableFile file_;
  std::uint64_t first_ = 0;  // the first token's offset in the file
  int width_ = 1;            // bytes per token
  bool is_signed_ = false;
  std::int64_t count_ = 0;
};

}  // namespace baton_models
