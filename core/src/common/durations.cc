#include "baton/durations.h"

#include <cstdio>

namespace baton {

std::string format_seconds(std::chrono::milliseconds duration) {
  const long long ms = duration.count();
  char text[64];
  if (ms % 1000 == 0) {
    std::snprintf(text, sizeof(text), "%lld s", ms / 1000);
  } else {
    // Up to millisecond precision, without trailing zeros: 0.5 s, 1.25 s, 0.001 s.
    std::snprintf(text, sizeof(text), "%.3f", static_cast<double>(ms) / 1000.0);
    std::string trimmed(text);
    while (trimmed.back() == '0') trimmed.pop_back();
    return trimmed + " s";
  }
  return text;
}

}  // namespace baton
