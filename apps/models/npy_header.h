// The header of a NumPy .npy file, read and checked without LibTorch (and fuzzed:
// tests/fuzz): a damaged or hostile file is refused naming what is wrong, and nothing is
// allocated for a shape the file's bytes cannot hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace baton_models {

struct NpyHeader {
  std::string type_code;            // "f4", "i8", "u2", "b1", ... (little-endian)
  std::vector<std::int64_t> shape;  // C order; empty: a scalar
  std::size_t data_offset = 0;      // where the elements start
  std::size_t data_bytes = 0;       // elements x element size, within the file
};

// Throws baton::ConfigError starting with `where` (e.g. "data.inputs ('x.npy')").
// `bytes`: the whole file (read, or mapped into memory).
NpyHeader parse_npy_header(std::string_view bytes, const std::string& where);

}  // namespace baton_models
