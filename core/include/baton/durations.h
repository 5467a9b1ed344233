// Durations as people write them in messages.
#pragma once

#include <chrono>
#include <string>

#include "baton/export.h"

namespace baton {

// "60 s", "0.5 s", "1.25 s": a timeout as people write it.
BATON_API std::string format_seconds(std::chrono::milliseconds duration);

}  // namespace baton
