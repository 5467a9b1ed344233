// A YAML configuration: loaded and checked, or refused with baton::ConfigError (or
// baton::Error) naming where; never a crash, a stack overflow or gigabytes of memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/config.h"
#include "baton/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  baton::ConfigOverrides overrides;
  overrides.use_environment = false;
  try {
    const baton::Config config = baton::load_config_text(text, "fuzz.yaml", overrides);
    (void)baton::format_resolved_config(config);
  } catch (const baton::Error&) {
  }
  return 0;
}
