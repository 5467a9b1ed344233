#include "baton/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "baton/error.h"

namespace baton {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw Error("cannot write '" + path + "': " + what + ": " + std::strerror(errno));
}

}  // namespace

bool write_fully(int fd, const std::string& data) {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  // The temporary file lives in the target's folder so rename() stays on one filesystem.
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) fail("cannot create a temporary file next to it", path);
  if (!write_fully(fd, contents)) {
    const int saved = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    errno = saved;
    fail("write failed", path);
  }
  // mkstemp creates 0600; outputs should be readable like any other file. (Reading the
  // umask would mean changing it, which races with other threads.)
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    errno = saved;
    fail("flush failed", path);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    errno = saved;
    fail("rename failed", path);
  }
  // The rename is durable only once the folder holding it is on disk: without this, a
  // "manifest written last" could vanish after a power failure.
  const std::size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "."
                             : slash == 0               ? "/"
                                                        : path.substr(0, slash);
  const int folder_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd >= 0) {
    ::fsync(folder_fd);
    ::close(folder_fd);
  }
}

void make_folders(const std::string& path, const std::string& what) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) {
    throw Error("cannot create " + what + " folder '" + path + "': " + error.message());
  }
}

std::string read_file(const std::string& path, const std::string& what) {
  // A FIFO would block and a device never end: only regular files are read.
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw Error("cannot read " + what + " '" + path + "': it is " +
                (std::filesystem::is_directory(status) ? "a directory"
                                                       : "not a regular file (a FIFO, a device)") +
                "; give a file");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error("cannot read " + what + " '" + path + "': " + std::strerror(errno));
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) throw Error("cannot read " + what + " '" + path + "': read failed");
  return contents.str();
}

}  // namespace baton
