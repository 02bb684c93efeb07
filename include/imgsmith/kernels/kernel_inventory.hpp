// Will the image's GPU code run on a GPU? Each CUDA binary's code against a
// compute capability, by CUDA's compatibility rules (the CUDA C++
// Programming Guide, "Binary Compatibility" and "PTX Compatibility"):
//   SASS sm_XY runs on compute capability X.Z with Z >= Y (same major);
//     an arch-specific sm_XYa on X.Y alone; a family sm_XYf as sm_XY;
//   PTX compute_XY is compiled by the driver (JIT) for any compute
//     capability >= X.Y (compute_XYa: X.Y alone; compute_XYf: the same
//     major), by a driver no older than the PTX's ISA;
//   with neither, the binary fails: "no kernel image is available for
//     execution on the device".
// A binary is judged on all its containers together: NVIDIA's libraries
// hold kernels for one architecture in modules of their own and load only
// those of the GPU at hand, so a module without code for this GPU is not a
// failure, and a binary with no code for it anywhere is.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "imgsmith/kernels/cuda_binary.hpp"
#include "imgsmith/models/vram.hpp"

namespace imgsmith {

struct CudaBinaryAt {
  std::string path;  // "/usr/local/cuda/lib64/libcublas.so.13"
  CudaBinary binary;
};

// The image's CUDA binaries, by path.
struct KernelInventory {
  std::vector<CudaBinaryAt> binaries;
  // The image's NVIDIA_REQUIRE_CUDA as its config sets it ("" when unset):
  // the NVIDIA Container Toolkit starts the container only on a driver that
  // meets it.
  std::string require_cuda;
  std::uint64_t sass_bytes() const;
  std::uint64_t ptx_bytes() const;
};

enum class KernelVerdict : std::uint8_t { Sass, Jit, None };

// How one binary's code meets one compute capability.
struct BinaryOnGpu {
  KernelVerdict verdict = KernelVerdict::None;
  std::string code;             // what runs: "sm_80" (SASS), "compute_90" (PTX)
  std::uint64_t jit_bytes = 0;  // the PTX the driver compiles at first load
  unsigned ptx_isa = 0;         // its ISA, major * 10 + minor
  // SASS of this binary a GPU of capability `cc` does not load: what a
  // build for it alone leaves out (sass_bytes_unused_by({cc})).
  std::uint64_t other_sass_bytes = 0;
};
BinaryOnGpu binary_on_gpu(const CudaBinary& binary, unsigned compute_capability);

// SASS of this binary that none of the GPUs of these compute capabilities
// loads: for each, the driver takes the highest architecture that runs
// there, and every other SASS entry is what a build for exactly these GPUs
// leaves out. Modules without a kernel count too (a build for these GPUs
// makes its own).
std::uint64_t sass_bytes_unused_by(const CudaBinary& binary,
                                   const std::vector<unsigned>& compute_capabilities);

// One GPU's answer for the whole image.
struct GpuKernelVerdict {
  Gpu gpu;
  std::vector<std::string> none;  // paths of binaries with no code for it
  std::vector<std::string> jit;   // paths of binaries it runs only through PTX JIT
  std::uint64_t jit_bytes = 0;
  unsigned jit_ptx_isa = 0;  // the newest ISA among what it compiles
  bool runs() const { return none.empty(); }
};
std::vector<GpuKernelVerdict> verdicts_per_gpu(const KernelInventory& inventory,
                                               const std::vector<Gpu>& gpus);

// The oldest driver the image's CUDA code runs on, against the oldest the
// image lets the NVIDIA Container Toolkit start it on.
struct DriverNeed {
  // The newest need among the shared CUDA runtimes the binaries name, by
  // minor version compatibility (libcudart.so.12: 525); 0 when none is
  // named or known. `path`: the first binary, by path, that names it.
  unsigned driver = 0;
  std::string cudart, path;
  // NVIDIA_REQUIRE_CUDA's cuda>=X.Y, and the first driver of CUDA X.Y
  // ("", 0: unset, or a release data/cuda-drivers.json does not know).
  std::string require_cuda;
  unsigned require_driver = 0;
};
DriverNeed driver_need(const KernelInventory& inventory);
// Where NVIDIA_REQUIRE_CUDA lets the container start on a driver its CUDA
// code cannot use, what happens there and the fix; "" otherwise.
std::string driver_need_warning(const DriverNeed& need);

// "8.9" for 89, "10.3" for 103.
std::string compute_capability_text(unsigned compute_capability);
// "9.0" for ISA 90.
std::string ptx_isa_text(unsigned isa);
// The CUDA release that first loads PTX of this ISA ("13.0"), and the
// first driver branch of that release (0: not in data/cuda-drivers.json).
std::string cuda_for_ptx_isa(unsigned isa);
unsigned driver_for_cuda(const std::string& cuda_release);
// The oldest driver a shared CUDA runtime's major release runs on (minor
// version compatibility): libcudart.so.12 -> 525; 0 when unknown.
unsigned driver_for_cudart(const std::string& cudart);

// "12.8" as 12080 (X * 1000 + Y * 10), so that releases order as numbers
// (a 12.10 after 12.9); 0 for text that is no release.
unsigned cuda_release_number(const std::string& release);

// The first CUDA release whose nvcc compiles for an SM architecture
// (data/cuda-images.json: "12.8" for 120); "" when the table has none.
std::string first_cuda_for_arch(unsigned arch);
// The first torch release with a wheel built on `cuda` or a later CUDA
// (data/torch-cuda.json), and that build ("2.7", "12.8"); empty when none.
std::pair<std::string, std::string> first_torch_on_cuda(const std::string& cuda);

}  // namespace imgsmith
