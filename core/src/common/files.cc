#include "baton/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "baton/error.h"

namespace baton {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw Error("cannot write '" + path + "': " + what + ": " + std::strerror(errno));
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (a named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
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

std::string non_regular_kind(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0 || S_ISREG(status.st_mode)) return std::string();
  return kind_of(status.st_mode);
}

ReadableFile ReadableFile::open(const std::string& path, const std::string& what) {
  const std::string name = "cannot read " + what + " '" + path + "': ";
  // O_NONBLOCK: opening a FIFO with no writer would wait forever; the type is checked on
  // the opened file itself, so nothing can be swapped in between.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    throw Error(name + std::strerror(error) +
                (error == ENOENT && !path.empty() && path[0] != '/'
                     ? " (a relative path is taken from the folder baton runs in)"
                     : ""));
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    throw Error(name + "it is " + kind_of(status.st_mode) +
                "; baton reads only regular files: give one");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  ReadableFile file;
  file.fd_ = fd;
  file.size_ = static_cast<std::uint64_t>(status.st_size);
  file.path_ = path;
  file.what_ = what;
  return file;
}

ReadableFile::ReadableFile(ReadableFile&& other) noexcept
    : fd_(other.fd_),
      size_(other.size_),
      path_(std::move(other.path_)),
      what_(std::move(other.what_)) {
  other.fd_ = -1;
}

ReadableFile& ReadableFile::operator=(ReadableFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    what_ = std::move(other.what_);
    other.fd_ = -1;
  }
  return *this;
}

ReadableFile::~ReadableFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ReadableFile::read_at(std::uint64_t offset, void* into, std::size_t bytes) const {
  auto* out = static_cast<char*>(into);
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, out + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw Error("cannot read " + what_ + " '" + path_ + "': " + std::strerror(errno));
    }
    if (n == 0) {
      throw Error("cannot read " + what_ + " '" + path_ + "': it ends at byte " +
                  std::to_string(offset + done) + ", where " + std::to_string(size_) +
                  " bytes were there when it was opened: it shrank while in use (was it "
                  "rewritten during the run?); leave a file alone while baton reads it");
    }
    done += static_cast<std::size_t>(n);
  }
}

std::string ReadableFile::read_all(std::uint64_t max_bytes) const {
  if (size_ > max_bytes) {
    throw Error("cannot read " + what_ + " '" + path_ + "': it is " + std::to_string(size_) +
                " bytes, more than the " + std::to_string(max_bytes) + " a " + what_ +
                " can be; is it the right file?");
  }
  std::string contents(static_cast<std::size_t>(size_), '\0');
  read_at(0, contents.data(), contents.size());
  return contents;
}

std::uint64_t require_readable_file(const std::string& path, const std::string& what) {
  return ReadableFile::open(path, what).size();
}

std::uint64_t machine_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

std::string read_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  return ReadableFile::open(path, what).read_all(max_bytes);
}

std::optional<std::string> read_file_if_present(const std::string& path, const std::string& what,
                                                std::uint64_t max_bytes) {
  struct stat status {};
  // lstat: a dangling link is something there, refused by the open below, not "absent".
  if (::lstat(path.c_str(), &status) != 0 && errno == ENOENT) return std::nullopt;
  return read_file(path, what, max_bytes);
}

}  // namespace baton
