// SPDX-License-Identifier: Apache-2.0
#include "caller.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace greenctx::preload {
namespace {

bool identifier_char(unsigned char c) {
  return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// `symbol` as a whole string in [begin, end): followed by a NUL, not preceded by a letter, digit
// or underscore.
bool has_string(const unsigned char *begin, const unsigned char *end, const std::string &symbol) {
  const std::size_t n = symbol.size();
  for (const unsigned char *p = begin; end - p > static_cast<std::ptrdiff_t>(n);) {
    const void *hit = memmem(p, static_cast<std::size_t>(end - p), symbol.c_str(), n);
    if (!hit)
      return false;
    const auto *h = static_cast<const unsigned char *>(hit);
    if (h + n < end && h[n] == 0 && (h == begin || !identifier_char(h[-1])))
      return true;
    p = h + 1;
  }
  return false;
}

struct found_object {
  std::string path;
  std::uintptr_t base = 0;
};

// dl_iterate_phdr rather than dladdr: it names the main program too ("" there: /proc/self/exe).
found_object find_object(const void *address) {
  struct search {
    std::uintptr_t at;
    found_object found;
  } s{reinterpret_cast<std::uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, std::size_t, void *data) -> int {
        auto *s = static_cast<search *>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s->at >= start && s->at < start + ph.p_memsz) {
            s->found.path =
                info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
            s->found.base = info->dlpi_addr;
            return 1;
          }
        }
        return 0;
      },
      &s);
  return s.found;
}

// Which of `symbols` the object file at `path` names (elf_names), read once.
std::vector<bool> file_names(const std::string &path, const std::vector<std::string> &symbols) {
  std::vector<bool> named(symbols.size(), false);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return named;
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    void *map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      for (std::size_t i = 0; i < symbols.size(); ++i)
        named[i] = elf_names(static_cast<const unsigned char *>(map), size, symbols[i]);
      munmap(map, size);
    }
  }
  close(fd);
  return named;
}

} // namespace

bool elf_names(const unsigned char *bytes, std::size_t size, const std::string &symbol) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(bytes, ELFMAG, SELFMAG) != 0 ||
      bytes[EI_CLASS] != ELFCLASS64)
    return false;
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes, sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff == 0 || eh.e_shnum == 0 ||
      eh.e_shoff > size || (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
    return has_string(bytes, bytes + size, symbol); // no section table: the whole file
  // Section names, to read only read-only data (.rodata*) and the dynamic string table: the
  // GPU code an object carries (.nv_fatbin, hundreds of MB in libcublasLt) is left alone.
  Elf64_Shdr names{};
  if (eh.e_shstrndx < eh.e_shnum)
    std::memcpy(&names, bytes + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof names);
  const auto name_is = [&](const Elf64_Shdr &sh, const char *want, bool prefix) {
    if (names.sh_offset > size || sh.sh_name >= names.sh_size ||
        names.sh_size > size - names.sh_offset)
      return false;
    const char *n = reinterpret_cast<const char *>(bytes + names.sh_offset + sh.sh_name);
    const std::size_t left = names.sh_size - sh.sh_name, len = std::strlen(want);
    if (strnlen(n, left) == left) // not terminated inside the table
      return false;
    return prefix ? std::strncmp(n, want, len) == 0 : std::strcmp(n, want) == 0;
  };
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    const bool data = sh.sh_type == SHT_PROGBITS && name_is(sh, ".rodata", true);
    const bool strings = sh.sh_type == SHT_STRTAB && name_is(sh, ".dynstr", false);
    if (!(data || strings) || sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
      continue;
    if (has_string(bytes + sh.sh_offset, bytes + sh.sh_offset + sh.sh_size, symbol))
      return true;
  }
  return false;
}

std::string object_path(const void *address) {
  std::string path = find_object(address).path;
  if (path == "/proc/self/exe") { // the program: by its own name
    char buf[4096];
    const ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
    if (n > 0)
      path.assign(buf, static_cast<std::size_t>(n));
  }
  return path;
}

caller_kind kind_of_caller(const void *address) {
  static std::mutex mutex;
  static auto *known = new std::map<std::uintptr_t, caller_kind>; // by load address; never freed
  const found_object o = find_object(address);
  if (o.path.empty())
    return caller_kind::other;
  static const std::uintptr_t self = find_object(reinterpret_cast<const void *>(&object_path)).base;
  if (o.base == self)
    return caller_kind::other;
  std::lock_guard lock(mutex);
  auto it = known->find(o.base);
  if (it == known->end()) {
    // A CUDA runtime carries the text of its own errors, this one among them; nothing else does.
    const std::vector<bool> named =
        file_names(o.path, {"cudaErrorSoftwareValidityNotEstablished", "cuDevSmResourceSplit"});
    const caller_kind kind = named[0] && named[1] ? caller_kind::runtime_13_1
                             : named[0]           ? caller_kind::runtime
                             : named[1]           ? caller_kind::knows_13_1
                                                  : caller_kind::other;
    it = known->emplace(o.base, kind).first;
  }
  return it->second;
}

} // namespace greenctx::preload
