// A YAML configuration as `baton config check` and `baton launch` read it, with the app's
// own sections (model, data, optimizer, checkpoint, trace) registered, so that inputs reach
// every section rather than stopping at "unknown section 'model'": loaded and checked, or
// refused with baton::ConfigError (or baton::Error) naming where; never a crash, a stack
// overflow or gigabytes of memory. Seeded with every shipped configuration (configs/*.yaml).
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/config.h"
#include "baton/error.h"
#include "training/config_sections.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool sections = (baton_app::add_app_config_sections(), true);
  (void)sections;
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
