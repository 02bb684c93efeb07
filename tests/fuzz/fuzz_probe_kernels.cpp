// imgsmith-probe's reader of CUDA binaries on disk, on any bytes: an ELF
// file's section headers (offsets, sizes, the names table), the fatbin
// containers of .nv_fatbin and .ldata and their entries, read at offsets
// from a file (a memfd here, as the probe reads a library); and the
// inventory file's text. Lying offsets and sizes end a read; nothing may
// crash, loop or allocate without bound.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "kernel_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("fuzz-probe-kernels", 0);
  if (fd < 0) return 0;
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
    return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (const auto binary = probe::read_binary_kernels(path)) {
    for (const unsigned cc : {75u, 90u, 103u, 120u})
      (void)imgsmith::fatbin::code_on_gpu<probe::KernelCode>(binary->code, cc);
    // What the probe writes, it reads back.
    std::vector<probe::BinaryKernels> back;
    if (!probe::parse_inventory(probe::inventory_text({*binary}), back) || back.size() != 1 ||
        back[0].code.size() != binary->code.size())
      __builtin_trap();
  }
  std::vector<probe::BinaryKernels> parsed;
  (void)probe::parse_inventory(std::string(reinterpret_cast<const char*>(data), size), parsed);
  return 0;
}
