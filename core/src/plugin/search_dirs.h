// Internal: the default plugin search folders.
#pragma once

#include <string>
#include <vector>

namespace baton {
namespace plugin_internal {

// BATON_PLUGIN_PATH entries, then next to the executable, <exe>/../lib/baton, next to
// libbaton_core (<dir>/baton), and the install folder — existing folders only, in order.
std::vector<std::string> default_search_dirs();

}  // namespace plugin_internal
}  // namespace baton
