// A checkpoint's manifest.json as --resume and `baton export` read it: refused with
// baton::ConfigError naming the file, or accepted only as a manifest resume can trust — a
// step and a world size in range, and for the current format one record per rank, every
// file with a size — never a crash or a raw JSON exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/error.h"
#include "training/checkpoint_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  baton_app::Manifest manifest;
  try {
    manifest = baton_app::parse_manifest(text, "fuzz/manifest.json");
  } catch (const baton::ConfigError& error) {
    // Every refusal names the file.
    if (std::string(error.what()).find("fuzz/manifest.json") == std::string::npos) {
      __builtin_trap();
    }
    return 0;
  }
  if (manifest.step < 1 || manifest.world_size < 1 || manifest.world_size > (1 << 16)) {
    __builtin_trap();
  }
  if (manifest.format == 2) {
    if (static_cast<long>(manifest.ranks.size()) != manifest.world_size) __builtin_trap();
    // A record written again reads back the same.
    for (const auto& record : manifest.ranks) {
      const auto again = baton_app::parse_record(baton_app::record_json(record), "again");
      if (again.files.size() != record.files.size() || again.entries != record.entries) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
