#include "imgsmith/models/model_file.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "imgsmith/models/model_json.hpp"
#include "model_readers.hpp"

namespace imgsmith {

using models_detail::Malformed;
using nlohmann::json;

std::uint64_t ModelShape::cached_layer_tokens(std::uint64_t context) const {
  const std::uint64_t sliding = std::min(sliding_layers, layers);
  const std::uint64_t window = sliding_window > 0 ? std::min(sliding_window, context) : context;
  std::uint64_t full = 0, windowed = 0, sum = 0;
  if (__builtin_mul_overflow(layers - sliding, context, &full) ||
      __builtin_mul_overflow(sliding, window, &windowed) ||
      __builtin_add_overflow(full, windowed, &sum))
    return UINT64_MAX;
  return sum;
}

bool kept_at_16_bits(std::string_view name, std::size_t rank) {
  if (rank <= 1) return true;
  // By the module's name: Llama's embed_tokens, BERT's word_embeddings,
  // GPT-NeoX's embed_out, GPT-2's wte/wpe, T5's shared, and every lm_head.
  std::size_t begin = 0;
  while (begin <= name.size()) {
    const std::size_t dot = std::min(name.find('.', begin), name.size());
    const std::string_view part = name.substr(begin, dot - begin);
    if (part.find("embed") != std::string_view::npos || part == "lm_head" || part == "wte" ||
        part == "wpe" || part == "shared")
      return true;
    begin = dot + 1;
  }
  return false;
}

namespace {

// A file whose header cannot be read: what was counted before the lie
// stays out (a half-read header would understate the model), and the
// file's own size stands for its weights, so a gate on the stored size
// still sees it.
ModelFile unreadable(ModelFormat format, std::uint64_t size, std::vector<std::string> warnings,
                     const std::string& why) {
  ModelFile bad;
  bad.format = format;
  bad.file_bytes = size;
  bad.parameters_known = false;
  bad.weight_bytes = size;
  bad.warnings = std::move(warnings);
  bad.warnings.push_back(std::string(model_format_name(format)) + " header unreadable (" + why +
                         "); its size is counted as its weights");
  return bad;
}

}  // namespace

ModelFile read_model_file(ModelFormat format, ForwardReader& in, std::uint64_t size) {
  ModelFile out;
  out.format = format;
  out.file_bytes = size;
  try {
    switch (format) {
      case ModelFormat::Safetensors:
        models_detail::read_safetensors(in, size, out);
        break;
      case ModelFormat::Gguf:
        models_detail::read_gguf(in, size, out);
        break;
      case ModelFormat::PyTorch:
        models_detail::read_pytorch(in, size, out);
        break;
      case ModelFormat::Onnx:
        models_detail::read_onnx(in, size, out);
        break;
      default:
        out.parameters_known = false;
        out.warnings.push_back("its format is not read for parameters");
        break;
    }
  } catch (const Malformed& e) {
    return unreadable(format, size, std::move(out.warnings), e.what());
  } catch (const std::exception& e) {
    // A reader's own mistake must not end the analysis of a whole image.
    return unreadable(format, size, std::move(out.warnings), e.what());
  }
  return out;
}

std::optional<ModelFile> inspect_model_content(std::string_view head, ForwardReader& rest,
                                               std::uint64_t size) {
  const ModelFormat format = sniff_model_format(head);
  if (format != ModelFormat::Safetensors && format != ModelFormat::Gguf &&
      format != ModelFormat::PyTorch && format != ModelFormat::Onnx)
    return std::nullopt;
  PrefixedReader whole(head, rest);
  return read_model_file(format, whole, size);
}

json shape_to_json(const ModelShape& s) {
  return {{"architecture", s.architecture},
          {"layers", s.layers},
          {"attention_heads", s.attention_heads},
          {"kv_heads", s.kv_heads},
          {"key_dim", s.key_dim},
          {"value_dim", s.value_dim},
          {"context_length", s.context_length},
          {"hidden_size", s.hidden_size},
          {"intermediate_size", s.intermediate_size},
          {"vocab_size", s.vocab_size},
          {"sliding_window", s.sliding_window},
          {"sliding_layers", s.sliding_layers}};
}

ModelShape shape_from_json(const json& j) {
  ModelShape s;
  s.architecture = j.at("architecture").get<std::string>();
  s.layers = j.at("layers").get<std::uint64_t>();
  s.attention_heads = j.at("attention_heads").get<std::uint64_t>();
  s.kv_heads = j.at("kv_heads").get<std::uint64_t>();
  s.key_dim = j.at("key_dim").get<std::uint64_t>();
  s.value_dim = j.at("value_dim").get<std::uint64_t>();
  s.context_length = j.at("context_length").get<std::uint64_t>();
  s.hidden_size = j.at("hidden_size").get<std::uint64_t>();
  // Absent from reports written before these were read.
  s.intermediate_size = j.value("intermediate_size", std::uint64_t{0});
  s.vocab_size = j.value("vocab_size", std::uint64_t{0});
  s.sliding_window = j.value("sliding_window", std::uint64_t{0});
  s.sliding_layers = j.value("sliding_layers", std::uint64_t{0});
  return s;
}

}  // namespace imgsmith
