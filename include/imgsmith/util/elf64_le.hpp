// The few fields of a 64-bit little-endian ELF file that its readers need
// (the kernels library's fatbin reader and the probe through
// fatbin_format.hpp; attribution, for Go's and cargo auditable's sections):
// little-endian integers, the section table's place and one section header.
// A header of the standard library alone, as the probe links nothing of
// imgsmith's. Bounds are the caller's to check.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace imgsmith::elf64 {

inline std::uint16_t u16(const char* p) {
  std::uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline std::uint32_t u32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline std::uint64_t u64(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Where the section headers are, from the ELF header `eh` (64 bytes) of a
// file of `size` bytes; false when they are missing or not within the file
// and `max_bytes`.
struct SectionTable {
  std::uint64_t offset = 0, entry_size = 0, count = 0, names_index = 0;
  std::uint64_t bytes() const { return entry_size * count; }
};
inline bool section_table(const char* eh, std::uint64_t size, std::uint64_t max_bytes,
                          SectionTable& out) {
  out = SectionTable{u64(eh + 40), u16(eh + 58), u16(eh + 60), u16(eh + 62)};
  return out.offset != 0 && out.count != 0 && out.entry_size >= 64 && out.names_index < out.count &&
         out.offset <= size && out.bytes() <= std::min(size - out.offset, max_bytes);
}

// The fields of one 64-bit section header (at `h`) the readers use.
struct SectionHeader {
  std::uint32_t name = 0, type = 0;
  std::uint64_t flags = 0, offset = 0, size = 0;
};
inline SectionHeader section_header(const char* h) {
  return SectionHeader{u32(h), u32(h + 4), u64(h + 8), u64(h + 24), u64(h + 32)};
}

}  // namespace imgsmith::elf64
