// Numbers as the benches print them: fixed decimals, for tables and JSON alike.
#pragma once

#include <cstdio>
#include <string>

namespace baton_app {

inline std::string fixed(double value, int decimals = 2) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

}  // namespace baton_app
