// Captures what this process writes to stderr (fd 2) while it lives, into a file.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace baton_test {

class StderrCapture {
 public:
  StderrCapture() : path_(::testing::TempDir() + "/stderr-" + std::to_string(::getpid())) {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    std::FILE* file = std::fopen(path_.c_str(), "w");
    ::dup2(::fileno(file), STDERR_FILENO);
    std::fclose(file);
  }
  ~StderrCapture() { restore(); }

  // Stops capturing and returns what was written.
  std::string text() {
    restore();
    return read();
  }

  // What was written so far; capturing goes on.
  std::string so_far() const {
    std::fflush(stderr);
    return read();
  }

 private:
  std::string read() const {
    std::ifstream file(path_);
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }

  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
  }

  std::string path_;
  int saved_ = -1;
};

}  // namespace baton_test
