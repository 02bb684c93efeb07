// Go's build info (src/debug/buildinfo/buildinfo.go describes it) and cargo
// auditable's .dep-v0 section (its PARSING.md), read from ELF files: what
// data/binary-packages.json cites. Written from those descriptions.
#include "imgsmith/attribution/binary_modules.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <vector>

#include "imgsmith/util/elf64_le.hpp"

namespace imgsmith {
namespace {

using elf64::u16;
using elf64::u32;
using elf64::u64;

constexpr std::string_view kGoMagic("\xff Go buildinf:", 14);
constexpr std::size_t kGoHeaderBytes = 32;
constexpr std::size_t kGoAlign = 16;
constexpr unsigned char kGoInlineStrings = 0x2;
// Go's own reader searches only the first 64 KiB of the data segment, but a
// program linked by the system linker (cgo: Debian's skopeo, runc,
// containerd) has .go.buildinfo 90-150 KiB into it: the whole segment is
// searched, up to this much.
constexpr std::size_t kGoSearchBytes = 8u << 20;
// No section table or module section of a real program is near these.
constexpr std::uint64_t kMaxSectionTableBytes = 1 << 20;
constexpr std::uint64_t kMaxSectionBytes = 8u << 20;
constexpr std::uint64_t kMaxProgramHeaderBytes = 1 << 16;

// A varint-prefixed string at `at` (advanced past it); false when it does
// not fit.
bool read_go_string(std::string_view data, std::size_t& at, std::string_view& out) {
  std::uint64_t len = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (at >= data.size() || shift > 63) return false;
    const auto b = static_cast<unsigned char>(data[at++]);
    len |= std::uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) break;
  }
  if (len > data.size() - at) return false;
  out = data.substr(at, static_cast<std::size_t>(len));
  at += static_cast<std::size_t>(len);
  return true;
}

// The field after `index` tabs of a modinfo line ("mod\tPATH\tVERSION").
std::string_view field(std::string_view line, std::size_t index) {
  for (std::size_t i = 0; i < index; ++i) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos) return {};
    line.remove_prefix(tab + 1);
  }
  return line.substr(0, line.find('\t'));
}

bool is_elf64le(std::string_view head) {
  return head.size() >= 64 &&
         head.starts_with(
             "\x7f"
             "ELF") &&
         head[4] == 2 && head[5] == 1;
}

// Whether the program headers in `head` name a note Go's linker writes (the
// build ID: owner "Go", type 4), within `head`.
bool has_go_note(std::string_view head) {
  const std::uint64_t phoff = u64(head.data() + 32);
  const std::uint64_t entsize = u16(head.data() + 54), count = u16(head.data() + 56);
  if (entsize < 56 || phoff > head.size() || entsize * count > head.size() - phoff) return false;
  for (std::uint64_t i = 0; i < count; ++i) {
    const char* ph = head.data() + phoff + i * entsize;
    if (u32(ph) != 4) continue;  // PT_NOTE
    const std::uint64_t off = u64(ph + 8), filesz = u64(ph + 32);
    if (off > head.size() || filesz > head.size() - off) continue;
    std::string_view notes =
        head.substr(static_cast<std::size_t>(off), static_cast<std::size_t>(filesz));
    while (notes.size() >= 12) {
      const std::uint64_t namesz = u32(notes.data()), descsz = u32(notes.data() + 4);
      const std::uint32_t type = u32(notes.data() + 8);
      const std::uint64_t name_bytes = (namesz + 3) & ~std::uint64_t{3};
      const std::uint64_t desc_bytes = (descsz + 3) & ~std::uint64_t{3};
      if (name_bytes + desc_bytes > notes.size() - 12) break;
      if (type == 4 && namesz >= 2 && notes.substr(12, 2) == "Go" &&
          (namesz == 2 || notes[14] == '\0'))
        return true;
      notes.remove_prefix(static_cast<std::size_t>(12 + name_bytes + desc_bytes));
    }
  }
  return false;
}

// Where the first writable, non-executable loadable segment lies in the
// file, as Go's reader finds its data: offset and bytes in the file.
struct Span {
  std::uint64_t offset = 0, bytes = 0;
};
std::optional<Span> first_data_segment(std::string_view program_headers, std::uint64_t entsize,
                                       std::uint64_t size) {
  for (std::size_t at = 0; at + entsize <= program_headers.size(); at += entsize) {
    const char* ph = program_headers.data() + at;
    const std::uint32_t flags = u32(ph + 4);
    if (u32(ph) != 1 || (flags & 3u) != 2u) continue;  // PT_LOAD, PF_W without PF_X
    const std::uint64_t off = u64(ph + 8), filesz = u64(ph + 32);
    if (off > size) return std::nullopt;
    return Span{off, std::min(filesz, size - off)};
  }
  return std::nullopt;
}

// The file's bytes [at, at + n), read at offsets; "" when they cannot be.
std::string read_span(ForwardReader& rest, std::uint64_t at, std::uint64_t n) {
  std::string out(static_cast<std::size_t>(n), '\0');
  out.resize(rest.read_at(at, out.data(), out.size()));
  return out.size() == n ? out : std::string();
}

// Random access: the sections named in data/binary-packages.json.
std::optional<BinaryModule> from_sections(std::string_view head, ForwardReader& rest,
                                          std::uint64_t size) {
  elf64::SectionTable st;
  if (!elf64::section_table(head.data(), size, kMaxSectionTableBytes, st)) return std::nullopt;
  const std::string table = read_span(rest, st.offset, st.bytes());
  if (table.empty()) return std::nullopt;
  const auto header = [&](std::uint64_t i) {
    return elf64::section_header(table.data() + i * st.entry_size);
  };
  const elf64::SectionHeader names_header = header(st.names_index);
  if (names_header.offset > size ||
      names_header.size > std::min(size - names_header.offset, kMaxSectionTableBytes))
    return std::nullopt;
  const std::string names = read_span(rest, names_header.offset, names_header.size);
  for (std::uint64_t i = 0; i < st.count; ++i) {
    const elf64::SectionHeader h = header(i);
    if (h.name >= names.size() || h.type == 8 /* SHT_NOBITS */) continue;
    const std::string_view name(names.c_str() + h.name);
    if (name != ".go.buildinfo" && name != ".dep-v0") continue;
    if (h.offset > size || h.size > std::min(size - h.offset, kMaxSectionBytes)) continue;
    const std::string bytes = read_span(rest, h.offset, h.size);
    auto found = name == ".go.buildinfo" ? parse_go_buildinfo(bytes, h.offset)
                                         : parse_cargo_auditable(bytes);
    if (found) return found;
  }
  return std::nullopt;
}

// Front to back (or at offsets where the section table is missing): a Go
// binary's first writable segment, as Go's reader does without sections.
std::optional<BinaryModule> from_data_segment(std::string_view head, ForwardReader& rest,
                                              std::uint64_t size) {
  const std::uint64_t phoff = u64(head.data() + 32), entsize = u16(head.data() + 54);
  const std::uint64_t bytes = entsize * u16(head.data() + 56);
  if (entsize < 56 || bytes > kMaxProgramHeaderBytes || phoff > size || bytes > size - phoff)
    return std::nullopt;
  PrefixedReader in(head, rest);
  const bool random = rest.reads_at();
  std::string headers;
  if (random) {
    headers = read_span(rest, phoff, bytes);
  } else if (in.skip(phoff) != phoff || !in.read_exact(headers, static_cast<std::size_t>(bytes))) {
    return std::nullopt;
  }
  const auto data = first_data_segment(headers, entsize, size);
  if (!data || data->offset < in.position()) return std::nullopt;
  const std::uint64_t n = std::min<std::uint64_t>(data->bytes, kGoSearchBytes);
  std::string segment;
  if (random) {
    segment = read_span(rest, data->offset, n);
  } else {
    const std::uint64_t gap = data->offset - in.position();
    if (in.skip(gap) != gap) return std::nullopt;
    in.read_exact(segment, static_cast<std::size_t>(n));
  }
  return parse_go_buildinfo(segment, data->offset);
}

}  // namespace

std::optional<BinaryModule> parse_go_buildinfo(std::string_view data, std::uint64_t file_offset) {
  // The header is 16-aligned in the file (its section is): from the first
  // such offset of `data`.
  std::size_t at = static_cast<std::size_t>((kGoAlign - file_offset % kGoAlign) % kGoAlign);
  for (; at + kGoHeaderBytes <= data.size(); at += kGoAlign)
    if (data.substr(at, kGoMagic.size()) == kGoMagic) break;
  if (at + kGoHeaderBytes > data.size()) return std::nullopt;
  if ((static_cast<unsigned char>(data[at + 15]) & kGoInlineStrings) == 0) return std::nullopt;
  std::size_t next = at + kGoHeaderBytes;
  std::string_view version, modinfo;
  if (!read_go_string(data, next, version) || !read_go_string(data, next, modinfo))
    return std::nullopt;
  // The linker wraps modinfo in 16-byte sentinels; it ends with a newline.
  if (modinfo.size() < 33 || modinfo[modinfo.size() - 17] != '\n') return std::nullopt;
  modinfo = modinfo.substr(16, modinfo.size() - 32);
  BinaryModule out{"go", "", "", std::string(version)};
  for (std::size_t from = 0; from < modinfo.size();) {
    const std::size_t end = std::min(modinfo.find('\n', from), modinfo.size());
    const std::string_view line = modinfo.substr(from, end - from);
    from = end + 1;
    if (line.starts_with("path\t") && out.package.empty()) {
      out.package = std::string(field(line, 1));
    } else if (line.starts_with("mod\t")) {
      out.package = std::string(field(line, 1));
      out.version = std::string(field(line, 2));
      break;
    }
  }
  if (out.package.empty()) return std::nullopt;
  return out;
}

std::optional<BinaryModule> parse_cargo_auditable(std::string_view compressed,
                                                  std::size_t max_json) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return std::nullopt;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(std::min<std::size_t>(compressed.size(), UINT32_MAX));
  std::string json;
  std::array<char, 16384> chunk;
  int rc = Z_OK;
  while (rc == Z_OK && json.size() <= max_json) {
    z.next_out = reinterpret_cast<Bytef*>(chunk.data());
    z.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&z, Z_NO_FLUSH);
    json.append(chunk.data(), chunk.size() - z.avail_out);
    if (rc == Z_OK && z.avail_out == chunk.size()) break;  // no progress: truncated input
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || json.size() > max_json) return std::nullopt;
  const auto doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  const auto packages = doc.find("packages");
  if (packages == doc.end() || !packages->is_array()) return std::nullopt;
  for (const auto& p : *packages) {
    if (!p.is_object() || !p.value("root", false)) continue;
    const auto name = p.find("name");
    const auto version = p.find("version");
    if (name == p.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
      return std::nullopt;
    return BinaryModule{
        "cargo", name->get<std::string>(),
        version != p.end() && version->is_string() ? version->get<std::string>() : std::string(),
        ""};
  }
  return std::nullopt;
}

std::optional<BinaryModule> inspect_binary_module(std::string_view head, ForwardReader& rest,
                                                  std::uint64_t size) {
  if (!is_elf64le(head)) return std::nullopt;
  const std::uint16_t type = u16(head.data() + 16);
  if (type != 2 && type != 3) return std::nullopt;  // ET_EXEC, ET_DYN
  if (rest.reads_at())
    if (auto found = from_sections(head, rest, size)) return found;
  if (has_go_note(head)) return from_data_segment(head, rest, size);
  return std::nullopt;
}

}  // namespace imgsmith
