// The model readers on any bytes, as analyze and gen meet them: the first
// bytes sniffed for a format (safetensors, GGUF, torch.save's zip, ONNX),
// the header read from the rest, and Hugging Face's config.json. A lying
// header is a warning in the result; nothing may crash or allocate without
// bound, and a pickle is never run.
#include <fuzzer/FuzzedDataProvider.h>

#include "imgsmith/models/model_file.hpp"
#include "imgsmith/models/vram.hpp"
#include "imgsmith/util/forward_reader.hpp"
#include "model_readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const bool config = in.ConsumeBool();
  const std::size_t head_bytes = in.ConsumeIntegralInRange<std::size_t>(0, 4096);
  // The size the tar header claims: the bytes here, or a lie either way.
  const int claim = in.ConsumeIntegralInRange(0, 2);
  const std::string bytes = in.ConsumeRemainingBytesAsString();
  // The fast reading of plain safetensors headers never disagrees with the
  // JSON parser's.
  if (!imgsmith::models_detail::plain_header_agrees(bytes)) __builtin_trap();
  if (config) {
    (void)imgsmith::read_hf_config(bytes);
    return 0;
  }
  const std::string head = bytes.substr(0, head_bytes);
  imgsmith::StringReader rest(std::string_view(bytes).substr(head.size()));
  const std::uint64_t file_size = claim == 0   ? bytes.size()
                                  : claim == 1 ? bytes.size() / 2
                                               : bytes.size() + (1ull << 40);
  (void)imgsmith::inspect_model_content(head, rest, file_size);
  return 0;
}
