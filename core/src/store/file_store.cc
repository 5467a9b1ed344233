// A store in a folder: one file per key. Writers create a uniquely named temporary file and
// rename(2) it over the key's file, which is atomic on POSIX file systems, so a reader sees
// either no value or a whole one. add() needs read-modify-write, serialized with flock(2)
// on a lock file in the folder (all processes of a run share it).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "baton/stores.h"

#include "baton/durations.h"
#include "baton/files.h"

namespace baton {

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// Keys may hold any byte ('/' in particular); file names keep [A-Za-z0-9._-] and escape the
// rest as %XX, which is reversible, so distinct keys never share a file.
std::string encode_key(const std::string& key) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string name;
  for (const unsigned char c : key) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
        c == '-' || (c == '.' && !name.empty())) {
      name += static_cast<char>(c);
    } else {
      name += '%';
      name += kHex[c >> 4];
      name += kHex[c & 0xF];
    }
  }
  // Every stored key starts with "k" so that the store's own files (".lock", ".tmp…")
  // cannot be shadowed by a key.
  return "k" + name;
}

bool read_file(const std::string& path, std::vector<std::uint8_t>* value) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    throw StoreError("file store: cannot read '" + path + "': " + errno_text());
  }
  value->clear();
  std::uint8_t chunk[4096];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = errno_text();
      ::close(fd);
      throw StoreError("file store: cannot read '" + path + "': " + why);
    }
    if (n == 0) break;
    value->insert(value->end(), chunk, chunk + n);
  }
  ::close(fd);
  return true;
}

// Holds an exclusive flock on the store's lock file.
class FolderLock {
 public:
  explicit FolderLock(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666)) {
    if (fd_ < 0) throw StoreError("file store: cannot open '" + path + "': " + errno_text());
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const std::string why = errno_text();
      ::close(fd_);
      throw StoreError("file store: cannot lock '" + path + "': " + why);
    }
  }
  ~FolderLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_;
};

}  // namespace

FileStore::FileStore(std::string directory) : directory_(std::move(directory)) {
  if (directory_.empty()) throw StoreError("file store: no folder given");
  while (directory_.size() > 1 && directory_.back() == '/') directory_.pop_back();
  try {
    make_folders(directory_, "file store");
  } catch (const Error& error) {
    throw StoreError(error.what());
  }
}

FileStore::~FileStore() = default;

std::string FileStore::path_of(const std::string& key) const {
  const std::string name = encode_key(key);
  // NAME_MAX is 255 on Linux file systems; writes add ".tmp.XXXXXX" to the name.
  if (name.size() > 240) {
    throw StoreError("file store: key '" + key + "' is too long (" + std::to_string(key.size()) +
                     " bytes) for a file name");
  }
  return directory_ + "/" + name;
}

void FileStore::write_atomically(const std::string& path,
                                 const std::vector<std::uint8_t>& value) const {
  try {
    write_file_atomically(path, std::string(value.begin(), value.end()));
  } catch (const StoreError&) {
    throw;
  } catch (const Error& error) {
    throw StoreError(std::string("file store: ") + error.what());
  }
}

void FileStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  write_atomically(path_of(key), value);
}

std::vector<std::uint8_t> FileStore::get(const std::string& key,
                                         std::chrono::milliseconds timeout) {
  const std::string path = path_of(key);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Poll with a growing pause: quick when the key is about to appear, cheap when it is not.
  std::chrono::milliseconds pause(1);
  std::vector<std::uint8_t> value;
  for (;;) {
    if (read_file(path, &value)) return value;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      throw StoreError("store: key '" + key + "' was not set within " + format_seconds(timeout) +
                       " (file store " + directory_ + ")");
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

bool FileStore::remove(const std::string& key) {
  return std::remove(path_of(key).c_str()) == 0;
}

std::int64_t FileStore::add(const std::string& key, std::int64_t delta) {
  const std::string path = path_of(key);
  FolderLock lock(directory_ + "/.lock");
  std::vector<std::uint8_t> value;
  std::int64_t current = 0;
  if (read_file(path, &value)) {
    const std::string text(value.begin(), value.end());
    char* end = nullptr;
    errno = 0;
    current = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || errno != 0 || *end != '\0') {
      throw StoreError("file store: add('" + key + "'): the value '" + text +
                       "' is not an integer");
    }
  }
  const std::int64_t updated = current + delta;
  const std::string text = std::to_string(updated);
  write_atomically(path, std::vector<std::uint8_t>(text.begin(), text.end()));
  return updated;
}

}  // namespace baton
