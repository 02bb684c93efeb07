// The GPU code a CUDA binary carries, read from its bytes as they stream
// past, or at offsets where the layer lies in a file: the fatbin containers of an ELF file (shared
// libraries, executables, Python extension modules), a standalone .fatbin, a .cubin or a .ptx text.
// What is read is headers only: each fatbin entry's kind (SASS or PTX), GPU
// architecture, variant and size; the code itself is stepped over.
//
// The fatbin layout is in fatbin_format.hpp. Kinds: 1 PTX, 2 a cubin
// (SASS), 8 NVVM IR (cuSPARSE's JIT-LTO fragments, in containers of its
// .rodata rather than .nv_fatbin).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "imgsmith/kernels/kernel_kind.hpp"
#include "imgsmith/util/forward_reader.hpp"

namespace imgsmith {

// One kind of code for one architecture, summed over every entry of it.
struct KernelCode {
  KernelKind kind = KernelKind::Sass;
  unsigned arch = 0;  // SM architecture as major * 10 + minor: 90 for sm_90
  // ' ': runs by the general rule; 'a': arch-specific (sm_90a: this exact
  // architecture only); 'f': family-specific (sm_100f: the same major).
  char variant = ' ';
  // SASS: the cubin's ELF ABI version; PTX: its ISA version, major * 10 +
  // minor (90 for ISA 9.0). The highest of the entries.
  unsigned version = 0;
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;  // as stored in the file (compressed where it is)
  std::uint64_t compressed_entries = 0;
  // SASS modules with no kernel in them (nvcc's device-link stubs): no GPU
  // needs code of them.
  std::uint64_t empty_entries = 0;

  // "sm_90a", "compute_120", "ir_80", "other_80".
  std::string name() const;
};

struct CudaBinary {
  enum class Form : std::uint8_t { Elf, Fatbin, Cubin, Ptx };
  Form form = Form::Elf;
  std::vector<KernelCode> code;  // sorted: kind, arch, variant
  std::uint64_t containers = 0;
  std::uint64_t fatbin_bytes = 0;  // containers' bytes, headers included
  // The shared CUDA runtime it names ("libcudart.so.12"); empty when it
  // names none (static cudart, the driver API alone).
  std::string cudart;
  std::vector<std::string> warnings;  // malformed containers, cut short files

  std::uint64_t sass_bytes() const;
  std::uint64_t ptx_bytes() const;
  // The highest PTX ISA carried (major * 10 + minor), 0 with no PTX.
  unsigned newest_ptx_isa() const;
};

// Whether the file at `path` of `size` bytes may be a CUDA binary, and how
// many of its first bytes the inspector wants: shared libraries and
// extension modules by name (.so, .so.N), .cubin, .fatbin and .ptx.
// (Executables without a name to tell them are read when they are large
// enough for analyze to keep their heads anyway.)
std::uint64_t kernel_capture(std::string_view path, std::uint64_t size);
inline constexpr std::uint64_t kKernelHeadBytes = 64;

// Reads the CUDA code of the file whose first bytes are `head` and whose
// rest is `rest` (`size` bytes in all). None when it carries no GPU code: no
// ELF, fatbin, cubin or PTX, or an ELF without a fatbin container. Of an
// ELF read front to back, reads only its loadable segments (where the
// linker puts .nv_fatbin, or .ldata with the medium code model), stepping
// over symbols and debug sections. Where `rest` reads at offsets
// (ForwardReader::reads_at), those offsets count from the file's first
// byte, `head` included: then the section headers are read, and only the
// sections that may hold containers (fatbin::section_may_hold_containers);
// a file whose section table is missing or does not fit is read by its
// segments. Both readings give the same answer for a well-formed file.
// Never throws on bad content: what cannot be read becomes a warning.
std::optional<CudaBinary> inspect_cuda_binary(std::string_view head, ForwardReader& rest,
                                              std::uint64_t size);

}  // namespace imgsmith
