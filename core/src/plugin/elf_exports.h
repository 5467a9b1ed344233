// Reads a shared library's dynamic symbol table from the file, without loading it: the
// loader refuses a file that is not a baton plugin before any of its code (static
// constructors included) runs.
#pragma once

#include <string>

namespace baton {
namespace plugin_internal {

enum class ElfExport { kDefined, kAbsent, kUnreadable };

// Whether the ELF file at `path` defines the dynamic symbol `name`. kUnreadable when the
// file is not a 64-bit little-endian ELF file with section headers this reader understands
// (the loader then refuses it: loading is running its code).
ElfExport elf_exports(const std::string& path, const std::string& name);

}  // namespace plugin_internal
}  // namespace baton
