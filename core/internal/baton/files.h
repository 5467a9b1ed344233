// Whole files, read and written one way everywhere. Writing is atomic: a temporary file next
// to the target, flushed to disk, renamed over the target, and the folder flushed too, so a
// reader never sees half of one.
#pragma once

#include <string>

#include "baton/export.h"

namespace baton {

// The whole file. Throws baton::Error "cannot read WHAT 'PATH': <system error>".
BATON_API std::string read_file(const std::string& path, const std::string& what);

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
