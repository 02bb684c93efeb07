// The layer scanner on any bytes: plain, gzip or zstd tar, read in chunk
// sizes the fuzzer picks, copied or read in place (as from a mapped file),
// capturing and digesting files as analyze does.
// A bad layer must end in InputError, never a crash, a leak or a hang.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_support.hpp"
#include "imgsmith/source/layer_scan.hpp"
#include "imgsmith/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  std::vector<std::size_t> chunks;
  const bool in_memory = in.ConsumeBool();
  const std::size_t schedule = in.ConsumeIntegralInRange<std::size_t>(0, 8);
  for (std::size_t i = 0; i < schedule; ++i)
    chunks.push_back(in.ConsumeIntegralInRange<std::size_t>(1, 9000));
  const std::string layer = in.ConsumeRemainingBytesAsString();
  auto stream = fuzz::chunked(layer, chunks, in_memory);
  const imgsmith::CaptureFn keep = [](std::string_view path,
                                      std::uint64_t file_size) -> std::uint64_t {
    return path.ends_with(".json") || path.find("dpkg") != std::string_view::npos
               ? imgsmith::kCaptureAll
           : file_size > 64 ? 64
                            : 0;
  };
  const imgsmith::CaptureFn hash = [](std::string_view, std::uint64_t file_size) -> std::uint64_t {
    return file_size % 2;
  };
  try {
    imgsmith::scan_layer(stream, layer.size(), "fuzz", keep, hash);
  } catch (const imgsmith::InputError&) {
  }
  return 0;
}
