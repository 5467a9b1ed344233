// PyTorch's action notation ("0F3", "1SEND_F2", "2B0;2W0"): any text is parsed or refused
// with baton::Error, and what parses prints back to text that parses to the same action.
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/error.h"
#include "baton/plan/action.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const baton::Action action = baton::parse_action(text, "fuzz");
    const std::string printed = baton::to_string(action);
    if (baton::to_string(baton::parse_action(printed, "fuzz")) != printed) __builtin_trap();
  } catch (const baton::Error&) {
  }
  return 0;
}
