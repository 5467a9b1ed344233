// Seconds on the steady clock since a start point: what the apps time with.
#pragma once

#include <chrono>

namespace baton_app {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace baton_app
