// A whole text file, or "" when it cannot be read (a test then fails on what it lacks).
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace baton_test {

inline std::string read_text(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

}  // namespace baton_test
