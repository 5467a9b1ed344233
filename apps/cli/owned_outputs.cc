#include "owned_outputs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "baton/error.h"
#include "baton/files.h"

namespace baton_app {
namespace {

namespace fs = std::filesystem;

// A checkpoint (a folder with a manifest.json) holds exactly the files its manifest lists
// and checks: a file written among them would invalidate it.
void refuse_checkpoint_folder(const fs::path& folder, const std::string& flag,
                              const std::string& path) {
  std::error_code error;
  if (fs::exists(folder / "manifest.json", error)) {
    throw baton::ConfigError(flag + " '" + path + "' is inside a checkpoint (" + folder.string() +
                             " holds a manifest.json): writing there would invalidate it; give "
                             "a path elsewhere");
  }
}

}  // namespace

void check_output_file(const std::string& path, const std::string& flag, const std::string& what,
                       const std::function<bool(const std::string& path)>& made_by_baton) {
  if (path.empty()) throw baton::ConfigError(flag + " is empty: give a file path");
  const fs::path target(path);
  refuse_checkpoint_folder(target.parent_path().empty() ? fs::path(".") : target.parent_path(),
                           flag, path);
  std::error_code error;
  const auto status = fs::symlink_status(target, error);
  if (!fs::exists(status)) return;
  const std::string kind = baton::non_regular_kind(path);
  if (!kind.empty() || fs::is_symlink(status)) {
    throw baton::ConfigError(flag + " '" + path + "' exists and is " +
                             (kind.empty() ? std::string("a symbolic link") : kind) +
                             ", not a file baton wrote; give a new file's path");
  }
  if (!made_by_baton(path)) {
    throw baton::ConfigError(flag + " '" + path + "' exists and is not " + what +
                             " baton wrote: baton does not write over a file it did not make; "
                             "remove it or give another path");
  }
}

std::string rank_file_name(int rank, const std::string& suffix) {
  return "rank" + std::to_string(rank) + suffix;
}

std::string rank_file(const std::string& folder, int rank, const std::string& suffix) {
  return folder + "/" + rank_file_name(rank, suffix);
}

bool is_rank_file_name(const std::string& name, std::initializer_list<const char*> suffixes) {
  if (name.rfind("rank", 0) != 0) return false;
  std::size_t end = 4;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == 4) return false;
  for (const char* suffix : suffixes) {
    if (name.compare(end, std::string::npos, suffix) == 0) return true;
  }
  return false;
}

void claim_output_folder(const std::string& path, const std::string& flag,
                         const std::string& marker,
                         const std::function<bool(const std::string& name)>& writes_name) {
  if (path.empty()) throw baton::ConfigError(flag + " is empty: give a folder path");
  std::error_code error;
  const fs::path folder(path);
  refuse_checkpoint_folder(folder, flag, path);
  if (fs::exists(folder, error) && !fs::is_directory(folder, error)) {
    throw baton::ConfigError(flag + " '" + path + "' exists and is not a folder");
  }
  if (!fs::exists(folder / marker, error)) {
    for (const auto& entry : fs::directory_iterator(folder, error)) {
      const std::string name = entry.path().filename().string();
      if (!writes_name(name)) continue;
      throw baton::ConfigError(flag + " '" + path + "' holds " + name +
                               ", which baton did not write there (no " + marker +
                               "): it would be replaced; give a new or empty folder");
    }
  }
  try {
    baton::make_folders(path, flag);
  } catch (const baton::Error& unwritable) {
    throw baton::ConfigError(unwritable.what());
  }
  // O_CREAT without O_EXCL: the ranks of one run claim it together.
  const std::string marker_path = path + "/" + marker;
  const int fd = ::open(marker_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    throw baton::ConfigError(flag + " '" + path + "': cannot write in it: " + std::strerror(errno));
  }
  ::close(fd);
}

}  // namespace baton_app
