#include "elf_exports.h"

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "baton/error.h"
#include "baton/files.h"

namespace baton {
namespace plugin_internal {
namespace {

// A bounds-checked view of the file's bytes: every offset and size read from the file is
// checked before it is used.
struct Bytes {
  std::vector<char> data;

  template <typename T>
  bool read(std::uint64_t offset, T* out) const {
    if (offset > data.size() || sizeof(T) > data.size() - offset) return false;
    std::memcpy(out, data.data() + offset, sizeof(T));
    return true;
  }
  bool contains(std::uint64_t offset, std::uint64_t size) const {
    return offset <= data.size() && size <= data.size() - offset;
  }
};

// A plugin file is a few megabytes; anything far larger is not one.
constexpr std::uint64_t kLargestFileRead = 512ull << 20;

}  // namespace

ElfExport elf_exports(const std::string& path, const std::string& name) {
  Bytes bytes;
  try {
    const ReadableFile file = ReadableFile::open(path, "plugin");
    if (file.size() < sizeof(Elf64_Ehdr) || file.size() > kLargestFileRead) {
      return ElfExport::kUnreadable;
    }
    bytes.data.resize(static_cast<std::size_t>(file.size()));
    file.read_at(0, bytes.data.data(), bytes.data.size());
  } catch (const Error&) {
    return ElfExport::kUnreadable;
  }

  Elf64_Ehdr header;
  if (!bytes.read(0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB ||
      header.e_shentsize != sizeof(Elf64_Shdr)) {
    return ElfExport::kUnreadable;
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (!bytes.read(header.e_shoff + i * sizeof(Elf64_Shdr), &sections[i])) {
      return ElfExport::kUnreadable;
    }
  }
  bool found_table = false;
  for (const Elf64_Shdr& table : sections) {
    if (table.sh_type != SHT_DYNSYM) continue;
    if (table.sh_link >= sections.size() || table.sh_entsize != sizeof(Elf64_Sym) ||
        !bytes.contains(table.sh_offset, table.sh_size)) {
      return ElfExport::kUnreadable;
    }
    found_table = true;
    const Elf64_Shdr& strings = sections[table.sh_link];
    if (!bytes.contains(strings.sh_offset, strings.sh_size)) return ElfExport::kUnreadable;
    for (std::uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= table.sh_size;
         offset += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      bytes.read(table.sh_offset + offset, &symbol);
      if (symbol.st_shndx == SHN_UNDEF || symbol.st_name >= strings.sh_size) continue;
      const char* text = bytes.data.data() + strings.sh_offset + symbol.st_name;
      const std::size_t room = strings.sh_size - symbol.st_name;
      if (strnlen(text, room) == name.size() && std::memcmp(text, name.data(), name.size()) == 0) {
        return ElfExport::kDefined;
      }
    }
  }
  return found_table ? ElfExport::kAbsent : ElfExport::kUnreadable;
}

}  // namespace plugin_internal
}  // namespace baton
