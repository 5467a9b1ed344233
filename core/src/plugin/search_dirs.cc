#include "search_dirs.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#ifndef BATON_INSTALL_PLUGIN_DIR
#define BATON_INSTALL_PLUGIN_DIR "/usr/local/lib/baton"
#endif

namespace baton {
namespace plugin_internal {
namespace {

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string executable_dir() {
  char buffer[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (length <= 0) return {};
  return parent_dir(std::string(buffer, static_cast<std::size_t>(length)));
}

std::string core_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&default_search_dirs), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) == nullptr) return {};
  return parent_dir(resolved);
}

}  // namespace

std::vector<std::string> default_search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("BATON_PLUGIN_PATH")) {
    std::string list = env;
    std::size_t start = 0;
    while (start <= list.size()) {
      const auto colon = list.find(':', start);
      const std::string entry =
          list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!entry.empty()) dirs.push_back(entry);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  const std::string exe_dir = executable_dir();
  if (!exe_dir.empty()) {
    dirs.push_back(exe_dir);
    dirs.push_back(parent_dir(exe_dir) + "/lib/baton");
  }
  const std::string core_dir = core_library_dir();
  if (!core_dir.empty()) dirs.push_back(core_dir + "/baton");
  dirs.push_back(BATON_INSTALL_PLUGIN_DIR);
  return dirs;
}

}  // namespace plugin_internal
}  // namespace baton
