// What one model file's headers say, read without reading its weights:
// safetensors' JSON header, GGUF's metadata and tensor infos, the entries of
// torch.save's zip (and its pickle, parsed, never run), ONNX's initializers.
// A header that lies (offsets past the end, byte counts that do not match
// the shape, absurd lengths) is reported in `warnings`, and what it claims
// is not counted; overlapping tensors are reported and counted as claimed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "imgsmith/models/model_format.hpp"
#include "imgsmith/util/forward_reader.hpp"

namespace imgsmith {

// A transformer's shape, as far as the KV cache needs it (0: not known).
struct ModelShape {
  std::string architecture;  // "llama", "LlamaForCausalLM", ...
  std::uint64_t layers = 0;
  std::uint64_t attention_heads = 0;
  std::uint64_t kv_heads = 0;
  std::uint64_t key_dim = 0;    // per head
  std::uint64_t value_dim = 0;  // per head
  std::uint64_t context_length = 0;
  std::uint64_t hidden_size = 0;
  // What a serving engine's activation peak grows with: the MLP's width
  // a token passes through (an MoE's expert width times the experts each
  // token takes) and the vocabulary its logits span. 0: not told.
  std::uint64_t intermediate_size = 0;
  std::uint64_t vocab_size = 0;
  // `sliding_layers` of the layers keep only the last `sliding_window`
  // tokens (0: every layer keeps the whole context).
  std::uint64_t sliding_window = 0;
  std::uint64_t sliding_layers = 0;

  // Enough to size a KV cache.
  bool has_kv_cache() const { return layers > 0 && kv_heads > 0 && key_dim > 0 && value_dim > 0; }
  // Of `context` tokens, how many each layer keeps on average, times the
  // layers: what the KV cache of one sequence holds, in layer-tokens.
  std::uint64_t cached_layer_tokens(std::uint64_t context) const;
};

struct ModelFile {
  ModelFormat format = ModelFormat::None;
  std::uint64_t file_bytes = 0;
  std::uint64_t tensors = 0;
  // Elements of every tensor. A GPTQ/AWQ checkpoint packs several 4-bit
  // weights in each int32 (`packed_elements` of them); the model's
  // parameter count corrects for that once its config says the bits.
  std::uint64_t parameters = 0;
  bool parameters_known = true;                           // false: the format told bytes only
  std::uint64_t weight_bytes = 0;                         // the tensors' data as stored
  std::map<std::string, std::uint64_t> dtype_parameters;  // "BF16", "Q4_K"... -> elements
  std::uint64_t packed_elements = 0;
  // A bitsandbytes checkpoint's uint8 `.weight` elements: two 4-bit weights
  // each when its config says 4-bit (8-bit weights are int8, one each).
  std::uint64_t packed_u8_elements = 0;
  // A quantized checkpoint's scales, zero-points and group indices (and
  // bitsandbytes' absmax, quant_map and quant_state): part of its bytes,
  // not of the model's parameters.
  std::uint64_t quantization_aux_elements = 0;
  // Elements of the tensors a weight quantizer leaves at 16 bits
  // (kept_at_16_bits): a 4-bit model's embeddings and LM head are a tenth
  // or more of it.
  std::uint64_t kept_16bit_elements = 0;
  ModelShape shape;                        // GGUF's metadata
  std::vector<std::string> external_data;  // ONNX: files named as holding initializers
  std::vector<std::string> warnings;
};

// Whether GPTQ, AWQ and bitsandbytes leave a tensor unquantized: vectors
// (norms, biases) and the token embeddings and LM head (they quantize the
// linear layers of the blocks; transformers' bitsandbytes integration skips
// `lm_head`, and nn.Embedding is no linear layer). `rank` is its dimensions.
bool kept_at_16_bits(std::string_view name, std::size_t rank);

// Reads the model in `in` (positioned at its first byte) of `size` bytes,
// whose format sniff_model_format told. Reads headers and steps over data.
// Never throws on bad content: what cannot be read becomes a warning.
ModelFile read_model_file(ModelFormat format, ForwardReader& in, std::uint64_t size);

// The model file whose first bytes are `head` and whose rest is `rest`;
// none when the content is not a model format imgsmith reads (Keras, NumPy
// and unknown files).
std::optional<ModelFile> inspect_model_content(std::string_view head, ForwardReader& rest,
                                               std::uint64_t size);

}  // namespace imgsmith
