#include "scratch_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "baton/error.h"

namespace baton_app {

ScratchFolder::ScratchFolder(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw baton::Error("cannot create a temporary folder " + pattern + ": " + std::strerror(errno));
  }
  path_ = pattern;
}

ScratchFolder::~ScratchFolder() {
  std::error_code ignored;  // a leftover temporary folder does not change the results
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchFolder::make_subfolder(const std::string& name) const {
  const std::string path = path_ + "/" + name;
  if (::mkdir(path.c_str(), 0700) != 0) {
    throw baton::Error("cannot create " + path + ": " + std::strerror(errno));
  }
  return path;
}

}  // namespace baton_app
