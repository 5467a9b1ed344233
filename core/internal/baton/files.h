// Whole files, read and written one way everywhere. Writing is atomic: a temporary file next
// to the target, flushed to disk, renamed over the target, and the folder flushed too, so a
// reader never sees half of one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "baton/export.h"

namespace baton {

// A file a user named, opened the one way baton opens what it reads: without blocking, and
// refused unless it is a regular file, so a FIFO, a device, a socket or a folder gives an
// error naming it instead of a hang or an endless read. Reads say which file ended early
// when it shrank while in use (where a memory map would kill the process with SIGBUS).
class BATON_API ReadableFile {
 public:
  // Throws baton::Error "cannot read WHAT 'PATH': it is a FIFO …; give a regular file".
  static ReadableFile open(const std::string& path, const std::string& what);
  ReadableFile(ReadableFile&& other) noexcept;
  ReadableFile& operator=(ReadableFile&& other) noexcept;
  ReadableFile(const ReadableFile&) = delete;
  ReadableFile& operator=(const ReadableFile&) = delete;
  ~ReadableFile();

  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Exactly `bytes` bytes from `offset`. Throws naming the file when it ends sooner.
  void read_at(std::uint64_t offset, void* into, std::size_t bytes) const;
  // The whole file. Throws, before reading, when it holds more than `max_bytes`.
  std::string read_all(std::uint64_t max_bytes) const;

 private:
  ReadableFile() = default;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string path_;
  std::string what_;
};

// What `path` is when it exists and is not a regular file ("a FIFO", "a directory", "a
// character device", "a socket", "a block device"); empty for a regular file or nothing.
BATON_API std::string non_regular_kind(const std::string& path);

// Throws baton::Error unless `path` is a regular file that can be opened for reading; for
// readers that must be given a path (LibTorch's loaders). Returns its size.
BATON_API std::uint64_t require_readable_file(const std::string& path, const std::string& what);

// The most read_file reads by default: the machine's memory. A file larger cannot be held.
BATON_API std::uint64_t machine_memory_bytes();

// The whole file, through ReadableFile. Throws baton::Error "cannot read WHAT 'PATH': …".
BATON_API std::string read_file(const std::string& path, const std::string& what,
                                std::uint64_t max_bytes = machine_memory_bytes());

// As read_file, or nothing when `path` does not exist (a file an earlier run may have left:
// remembered cuts, earlier metrics). Anything else that keeps it from being read throws.
BATON_API std::optional<std::string> read_file_if_present(
    const std::string& path, const std::string& what,
    std::uint64_t max_bytes = machine_memory_bytes());

// Creates folder `path` and its missing parents (mkdir -p). Throws baton::Error "cannot
// create WHAT folder 'PATH': <system error>".
BATON_API void make_folders(const std::string& path, const std::string& what);

// Writes all of `data` to `fd` with as few write() calls as the kernel allows (one, for a
// line on a pipe or an O_APPEND file: lines of concurrent writers never interleave),
// retrying interrupted calls. False, with errno set, when a write fails.
BATON_API bool write_fully(int fd, const std::string& data);

// Throws baton::Error naming the path and the system error.
BATON_API void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace baton
