// Writing files so that a reader never sees half of one: write a temporary file next to
// the target, flush it to disk, then rename it over the target.
#pragma once

#include <string>

#include "baton/export.h"

namespace baton {

// Throws baton::Error naming the path and the system error.
BATON_API void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace baton
