// Numbers as the programs print them: fixed decimals, for tables and JSON alike.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace baton_app {

// `value` rounded to `decimals` decimals, for JSON (which then prints it in full).
inline double rounded(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::isfinite(value) ? std::round(value * scale) / scale : value;
}

inline std::string fixed(double value, int decimals = 2) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

}  // namespace baton_app
