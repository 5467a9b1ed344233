// The header of a NumPy .npy file, read and checked without LibTorch (and fuzzed:
// tests/fuzz): a damaged or hostile file is refused naming what is wrong, and nothing is
// allocated for a shape the file's bytes cannot hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "baton/files.h"

namespace baton_models {

struct NpyHeader {
  std::string type_code;            // "f4", "i8", "u2", "b1", ... (little-endian)
  std::vector<std::int64_t> shape;  // C order; empty: a scalar
  std::size_t data_offset = 0;      // where the elements start
  std::size_t data_bytes = 0;       // elements x element size, within the file
};

// Throws baton::ConfigError starting with `where` (e.g. "data.inputs ('x.npy')").
// `head`: the file's first bytes (at least its header), `file_size`: all of its bytes, so a
// file is checked against its header before its data is read.
NpyHeader parse_npy_header(std::string_view head, std::uint64_t file_size,
                           const std::string& where);

// The same, for a whole file in memory.
inline NpyHeader parse_npy_header(std::string_view bytes, const std::string& where) {
  return parse_npy_header(bytes, bytes.size(), where);
}

// How many of a file's first bytes read_npy_header reads: a longer header is refused.
constexpr std::size_t kNpyHeadBytes = 1 << 20;

// The header of the .npy `file`, read from its first bytes and checked against its size, so
// its data is read only once the header says what it holds.
NpyHeader read_npy_header(const baton::ReadableFile& file, const std::string& where);

}  // namespace baton_models
