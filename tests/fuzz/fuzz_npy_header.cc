// A .npy file's header: parsed or refused with baton::ConfigError; what parses describes
// data that lies inside the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/error.h"
#include "npy_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const baton_models::NpyHeader header = baton_models::parse_npy_header(bytes, "fuzz.npy");
    if (header.data_offset > bytes.size() ||
        header.data_bytes > bytes.size() - header.data_offset) {
      __builtin_trap();
    }
  } catch (const baton::Error&) {
  }
  return 0;
}
