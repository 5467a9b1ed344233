#include "token_stream.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "baton/error.h"
#include "npy_header.h"

namespace baton_models {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::shared_ptr<const TokenStream> TokenStream::open(const std::string& path, TokenFormat format,
                                                     const std::string& what) {
  const std::string where = what + " ('" + path + "')";
  if (format == TokenFormat::kBySuffix) {
    format = ends_with(path, ".npy") ? TokenFormat::kNpy : TokenFormat::kBytes;
  }
  std::shared_ptr<TokenStream> stream;
  try {
    stream.reset(new TokenStream(baton::ReadableFile::open(path, what)));
  } catch (const baton::Error& error) {
    throw baton::ConfigError(error.what());
  }
  stream->path_ = path;
  std::uint64_t data_bytes = stream->file_.size();
  if (format == TokenFormat::kNpy) {
    const NpyHeader header = read_npy_header(stream->file_, where);
    const std::string& code = header.type_code;
    if (header.shape.size() != 1 || code[0] == 'f' || code == "b1") {
      throw baton::ConfigError(where + ": a token file must be a 1-D integer array");
    }
    stream->first_ = header.data_offset;
    data_bytes = header.data_bytes;
    stream->width_ = code[1] - '0';
    stream->is_signed_ = code[0] == 'i';
  } else {
    stream->width_ = format == TokenFormat::kBytes ? 1 : format == TokenFormat::kUint16 ? 2 : 4;
    stream->is_signed_ = format == TokenFormat::kInt32;
    if (data_bytes % static_cast<std::uint64_t>(stream->width_) != 0) {
      throw baton::ConfigError(where + ": " + std::to_string(data_bytes) +
                               " bytes is not a whole number of " +
                               (format == TokenFormat::kUint16 ? "uint16" : "int32") + " tokens");
    }
  }
  stream->count_ =
      static_cast<std::int64_t>(data_bytes / static_cast<std::uint64_t>(stream->width_));
  return stream;
}

void TokenStream::read_tokens(std::int64_t start, std::int64_t count, std::int64_t* into) const {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(count * width_));
  file_.read_at(first_ + static_cast<std::uint64_t>(start * width_), bytes.data(), bytes.size());
  const unsigned char* at = bytes.data();
  for (std::int64_t i = 0; i < count; ++i, at += width_) {
    switch (width_) {
      case 1:
        into[i] = is_signed_ ? static_cast<std::int8_t>(*at) : *at;
        break;
      case 2: {
        std::uint16_t value;
        std::memcpy(&value, at, 2);
        into[i] = is_signed_ ? static_cast<std::int64_t>(static_cast<std::int16_t>(value)) : value;
        break;
      }
      case 4: {
        std::uint32_t value;
        std::memcpy(&value, at, 4);
        // Not one ?: over the two: its common type would be unsigned.
        if (is_signed_) {
          into[i] = static_cast<std::int32_t>(value);
        } else {
          into[i] = value;
        }
        break;
      }
      default:
        std::memcpy(&into[i], at, 8);
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
  read_tokens(start, length, tokens.data_ptr<std::int64_t>());
  return tokens;
}

std::pair<std::int64_t, std::int64_t> TokenStream::id_range() const {
  // A chunk at a time: a multi-GiB file is scanned without holding it.
  constexpr std::int64_t kChunk = 1 << 18;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(std::min(kChunk, count_)));
  std::int64_t low = 0, high = 0;
  for (std::int64_t start = 0; start < count_; start += kChunk) {
    const std::int64_t count = std::min(kChunk, count_ - start);
    read_tokens(start, count, ids.data());
    for (std::int64_t i = 0; i < count; ++i) {
      if ((start == 0 && i == 0) || ids[i] < low) low = ids[i];
      if ((start == 0 && i == 0) || ids[i] > high) high = ids[i];
    }
  }
  return {low, high};
}

}  // namespace baton_models
