// Internal: an ABI version as the loader's messages write it ("2.2").
#pragma once

#include <cstdint>
#include <string>

#include "baton/plugin.h"

namespace baton {
namespace plugin_internal {

inline std::string abi_version_text(std::uint32_t major, std::uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// This core's.
inline std::string core_abi_version_text() {
  return abi_version_text(BATON_ABI_MAJOR, BATON_ABI_MINOR);
}

}  // namespace plugin_internal
}  // namespace baton
