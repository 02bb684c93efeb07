// The kinds of GPU code a fatbin entry holds: apart from the fatbin layout
// (fatbin_format.hpp), so that the many files that name a kind do not
// depend on the layout and the rules.
#pragma once

#include <cstdint>

namespace imgsmith {

// Sass: GPU machine code (a cubin); Ptx: the virtual ISA the driver
// compiles; Ir: NVVM IR for link-time optimisation at run time (nvJitLink:
// cuSPARSE carries it), which no GPU runs as it is; Other: a kind no tool
// here knows.
enum class KernelKind : std::uint8_t { Sass, Ptx, Ir, Other };

}  // namespace imgsmith
