// The CUDA binary reader on any bytes, as analyze meets them in a layer: an
// ELF's program or section headers, fatbin containers and their entries, a cubin's
// ELF header, a PTX text; the head split where the capture splits it, the
// rest handed out in pieces of any size, and a tar header's size that may
// lie. Lying offsets and sizes are warnings; nothing may crash, loop or
// allocate without bound.
#include <fuzzer/FuzzedDataProvider.h>

#include "imgsmith/kernels/cuda_binary.hpp"
#include "imgsmith/kernels/kernel_inventory.hpp"
#include "piece_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::size_t step = in.ConsumeIntegralInRange<std::size_t>(1, 70000);
  const int claim = in.ConsumeIntegralInRange(0, 2);
  // Front to back (a compressed layer) or at offsets through the section
  // headers (an uncompressed one).
  const bool at_offsets = in.ConsumeBool();
  const std::string bytes = in.ConsumeRemainingBytesAsString();
  const std::size_t head = std::min<std::size_t>(bytes.size(), imgsmith::kKernelHeadBytes);
  imgsmith::testing::PieceReader forward(std::string_view(bytes).substr(head), step);
  imgsmith::testing::AtReader at(bytes, head, step);
  imgsmith::ForwardReader& rest = at_offsets ? static_cast<imgsmith::ForwardReader&>(at) : forward;
  const std::uint64_t file_size = claim == 0   ? bytes.size()
                                  : claim == 1 ? bytes.size() / 2
                                               : bytes.size() + (1ull << 40);
  if (file_size < head) return 0;  // a capture never hands more head than the file
  const auto binary =
      imgsmith::inspect_cuda_binary(std::string_view(bytes).substr(0, head), rest, file_size);
  if (binary)
    for (const unsigned cc : {75u, 90u, 103u, 120u}) (void)imgsmith::binary_on_gpu(*binary, cc);
  return 0;
}
