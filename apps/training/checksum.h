// The checksum checkpoint manifests record for every file: 64-bit FNV-1a, as 16 hex digits.
// Not cryptographic: it finds damage (bit flips, a file from another step or run), which is
// what a manifest guards against.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace baton_app {

inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ULL) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

inline std::string checksum_text(std::string_view bytes) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(fnv1a64(bytes)));
  return text;
}

}  // namespace baton_app
