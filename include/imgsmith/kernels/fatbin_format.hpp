// The fatbin layout and CUDA's binary compatibility rules, as plain
// functions over bytes and numbers. Two readers share them: analyze's
// (cuda_binary.cpp, which reads an image's files as its layers stream past)
// and imgsmith-probe's (probes/kernel_check.cpp, which reads the files of a
// running container at start and links nothing else of imgsmith's). So this
// header depends on the C++ standard library alone.
//
// A fatbin container (NVIDIA documents no format; this follows the layout
// nvcc 13 writes here and the CUDA libraries of the toolkit, as the tests
// read them): a 16-byte header (magic 0xBA55ED50, version 1, header size,
// the size of the entries that follow), then entries, each a header of 64
// bytes or more and its payload. An entry's header: kind (1 PTX, 2 ELF, 8
// NVVM IR) at 0, header size at 4, payload size as stored at 8, the code's
// version (minor at 24, major at 26), SM architecture at 28, flags at 40
// (0x2000 or 0x8000 compressed, 0x100000 arch-specific `a`, 0x200000
// family `f`).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "imgsmith/kernels/kernel_kind.hpp"
#include "imgsmith/util/elf64_le.hpp"

namespace imgsmith {
namespace fatbin {

inline constexpr std::uint32_t kMagic = 0xBA55ED50;
inline constexpr std::uint64_t kContainerHeadBytes = 16;
inline constexpr std::uint64_t kEntryHeadBytes = 64;
// No header nvcc writes is near these; a larger one is not a fatbin's.
inline constexpr std::uint64_t kMaxContainerHeadBytes = 256;
inline constexpr std::uint64_t kMaxEntryHeadBytes = 4096;
// A cubin this small and stored plain is read to see whether it holds any
// kernel: nvcc's device-link step leaves modules with none (libcufftw's
// only module is one), which no GPU needs code of.
inline constexpr std::uint64_t kModuleLookBytes = 64 * 1024;
inline constexpr std::uint16_t kElfMachineCuda = 190;

// The ELF reading is util's (elf64_le.hpp), which attribution shares.
using elf64::u16;
using elf64::u32;
using elf64::u64;

// The first container magic at an 8-aligned offset of [p, p + n) (offsets
// counted from p, which must lie at an 8-aligned offset of its file), or
// null: .nv_fatbin is 8-aligned and every container's size is a multiple of
// 8, so a magic off that grid is no container. Eight words are compared at
// a time without a branch each: five to six times as fast as memmem over a
// library's bytes (which also stops at every unaligned match).
static_assert(std::endian::native == std::endian::little,
              "fatbins are little-endian, and find_aligned_magic reads words in the host's order");
inline const char* find_aligned_magic(const char* p, std::size_t n) {
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    std::uint64_t words[8];
    std::memcpy(words, p + i, sizeof words);
    bool any = false;
    for (const std::uint64_t w : words) any |= static_cast<std::uint32_t>(w) == kMagic;
    if (any) break;
  }
  for (; i + 4 <= n; i += 8)
    if (u32(p + i) == kMagic) return p + i;
  return nullptr;
}

// Where a 64-bit ELF file's section header table lies, from its ELF header
// (64 bytes at `eh`), and which header names the sections; false when the
// file has none (a stripped table) or it does not fit a file of `size`
// bytes, or is over `max_bytes` (real libraries have a few dozen sections).
using elf64::SectionTable;
inline bool read_section_table(const char* eh, std::uint64_t size, std::uint64_t max_bytes,
                               SectionTable& out) {
  return elf64::section_table(eh, size, max_bytes, out);
}

// The fields of one 64-bit section header (at `h`) the readers use.
using elf64::SectionHeader;
inline SectionHeader read_section_header(const char* h) { return elf64::section_header(h); }

// Whether an ELF section may hold fatbin containers: allocated (SHF_ALLOC),
// with bytes in the file (SHT_PROGBITS), neither code (SHF_EXECINSTR) nor
// an unwinding table the compiler formats. A rule on what a section is,
// not a list of names: the toolkit's libraries keep containers in
// .nv_fatbin, in NCCL's __nv_relfatbin, in cuFFT's .ldata (the medium code
// model), in cuBLASLt's and cuDNN's .cask_resource and in cuSPARSE's
// .rodata (JIT-LTO IR), and the next library may use another name.
inline bool section_may_hold_containers(std::uint32_t type, std::uint64_t flags,
                                        std::string_view name) {
  constexpr std::uint32_t kProgbits = 1;
  constexpr std::uint64_t kAlloc = 2, kExecInstr = 4;
  return type == kProgbits && (flags & kAlloc) != 0 && (flags & kExecInstr) == 0 &&
         name != ".eh_frame" && name != ".eh_frame_hdr" && name != ".gcc_except_table";
}

// A container's header (kContainerHeadBytes at `p`): its header's size and
// the size of its entries; false when the bytes are no container header.
struct ContainerHead {
  std::uint64_t head = 0, entries = 0;
};
inline bool read_container_head(const char* p, ContainerHead& out) {
  if (u32(p) != kMagic || u16(p + 4) != 1) return false;
  out.head = u16(p + 6);
  out.entries = u64(p + 8);
  return out.head >= kContainerHeadBytes && out.head <= kMaxContainerHeadBytes;
}

// An entry's header (kEntryHeadBytes at `p`). `valid` is false when its
// sizes cannot be an entry's; whether it fits its container is the
// caller's to check.
struct EntryHead {
  KernelKind kind = KernelKind::Other;
  std::uint64_t head = 0, payload = 0;
  unsigned version = 0;  // major * 10 + minor (ELF ABI for SASS, ISA for PTX)
  unsigned arch = 0;     // major * 10 + minor: 90 for sm_90
  char variant = ' ';    // ' ', 'a' (arch-specific) or 'f' (family)
  bool compressed = false;
  bool valid = false;
};
inline EntryHead read_entry_head(const char* p) {
  EntryHead e;
  const std::uint16_t kind = u16(p);
  e.kind = kind == 1   ? KernelKind::Ptx
           : kind == 2 ? KernelKind::Sass
           : kind == 8 ? KernelKind::Ir
                       : KernelKind::Other;
  e.head = u32(p + 4);
  e.payload = u64(p + 8);
  const unsigned minor = u16(p + 24);
  e.version = u16(p + 26) * 10u + (minor > 9 ? 9 : minor);
  const std::uint32_t arch = u32(p + 28);
  e.arch = arch > 10000 ? 0 : arch;
  const std::uint64_t flags = u64(p + 40);
  e.variant = (flags & 0x100000) != 0 ? 'a' : (flags & 0x200000) != 0 ? 'f' : ' ';
  e.compressed = (flags & 0xA000) != 0;
  e.valid = e.head >= kEntryHeadBytes && e.head <= kMaxEntryHeadBytes;
  return e;
}

// Whether a cubin (a 64-bit ELF of the GPU's code) has a section of kernel
// code (".text.NAME"); true when its section headers cannot be read.
inline bool cubin_has_kernel(std::string_view c) {
  if (c.size() < 64 || !c.starts_with("\x7f"
                                      "ELF"))
    return true;
  const std::uint64_t shoff = u64(c.data() + 0x28);
  const std::uint16_t entsize = u16(c.data() + 0x3a);
  const std::uint16_t count = u16(c.data() + 0x3c);
  const std::uint16_t names_at = u16(c.data() + 0x3e);
  if (entsize < 64 || names_at >= count || shoff > c.size() ||
      std::uint64_t{entsize} * count > c.size() - shoff)
    return true;
  const char* names_header = c.data() + shoff + std::size_t{names_at} * entsize;
  const std::uint64_t names = u64(names_header + 0x18);
  const std::uint64_t names_size = u64(names_header + 0x20);
  if (names > c.size() || names_size > c.size() - names) return true;
  const std::string_view table =
      c.substr(static_cast<std::size_t>(names), static_cast<std::size_t>(names_size));
  for (std::uint16_t i = 0; i < count; ++i) {
    const std::uint32_t name = u32(c.data() + shoff + std::size_t{i} * entsize);
    if (name < table.size() && table.substr(name).starts_with(".text.")) return true;
  }
  return false;
}

// A standalone cubin's architecture, from its ELF header (64 bytes): e_flags
// bits 8-15 from ELF ABI version 8 (CUDA 12.8's), the low byte before.
inline unsigned cubin_arch(const char* elf_header) {
  const std::uint32_t flags = u32(elf_header + 48);
  const unsigned abi = static_cast<unsigned char>(elf_header[8]);
  return abi >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

// CUDA's compatibility rules (the CUDA C++ Programming Guide, "Binary
// Compatibility" and "PTX Compatibility"), for code of architecture `arch`
// (90 for sm_90) and `variant` on a GPU of compute capability `cc` (90 for
// 9.0):
// SASS sm_XY runs on X.Z with Z >= Y (same major); sm_XYa on X.Y alone; a
// family sm_XYf as sm_XY.
inline bool sass_runs(unsigned arch, char variant, unsigned cc) {
  if (variant == 'a') return arch == cc;
  return arch / 10 == cc / 10 && arch % 10 <= cc % 10;
}
// PTX compute_XY is compiled by the driver for any compute capability >=
// X.Y; compute_XYa for X.Y alone; compute_XYf for the same major.
inline bool ptx_compiles(unsigned arch, char variant, unsigned cc) {
  if (variant == 'a') return arch == cc;
  if (variant == 'f') return arch / 10 == cc / 10 && arch % 10 <= cc % 10;
  return arch <= cc;
}

// What a GPU of compute capability `cc` runs of one binary's code: `Code`
// has kind, arch, variant, version, entries, bytes and empty_entries (a
// binary's code merged by kind, architecture and variant). A binary is
// judged on all its modules together: NVIDIA's libraries hold each
// architecture's kernels in modules of their own and load only those of the
// GPU at hand, so a module without code for this GPU is not a failure, and
// a binary with no code for it anywhere is ("no kernel image is available
// for execution on the device").
template <typename Code>
struct CodeOnGpu {
  const Code* sass = nullptr;  // the SASS the driver loads: the highest that runs
  const Code* ptx = nullptr;   // without SASS, the PTX it compiles: the highest
  // False when every module is without a kernel (nvcc's device-link
  // stubs): nothing to load, nothing to fail.
  bool any_kernel = false;
  std::uint64_t jit_bytes = 0;  // every module's PTX of `ptx`'s architecture
};
template <typename Code, typename Codes>
CodeOnGpu<Code> code_on_gpu(const Codes& codes, unsigned cc) {
  CodeOnGpu<Code> out;
  for (const Code& c : codes) {
    if (c.kind == KernelKind::Sass && c.empty_entries == c.entries) continue;
    out.any_kernel = out.any_kernel || c.kind == KernelKind::Sass || c.kind == KernelKind::Ptx;
    if (c.kind == KernelKind::Sass && sass_runs(c.arch, c.variant, cc) &&
        (out.sass == nullptr || c.arch > out.sass->arch))
      out.sass = &c;
    if (c.kind == KernelKind::Ptx && ptx_compiles(c.arch, c.variant, cc) &&
        (out.ptx == nullptr || c.arch > out.ptx->arch))
      out.ptx = &c;
  }
  if (out.sass == nullptr && out.ptx != nullptr)
    for (const Code& c : codes)
      if (c.kind == KernelKind::Ptx && c.arch == out.ptx->arch && c.variant == out.ptx->variant)
        out.jit_bytes += c.bytes;
  return out;
}

}  // namespace fatbin
}  // namespace imgsmith
