// From model files to models: shards grouped by directory and format, the
// config.json beside them read for the transformer's shape and its
// quantization.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <tuple>

#include "imgsmith/models/vram.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

std::uint64_t first_number(const json& doc, std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (const auto it = doc.find(key); it != doc.end() && it->is_number_unsigned())
      return it->get<std::uint64_t>();
  return 0;
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// "model-00001-of-00004.safetensors" -> "model.safetensors": the shards of
// one checkpoint (Hugging Face's and llama.cpp's split naming) share it.
// Any other name is its own: two checkpoints in one folder are two models.
std::string shard_group(const std::string& path) {
  static const std::regex shard(R"(-\d{5}-of-\d{5})");
  const std::string name = path.substr(path.rfind('/') + 1);
  return std::regex_replace(name, shard, "");
}

}  // namespace

// config.json's fields; nlohmann throws on a field of the wrong type,
// which read_hf_config turns into "not a config".
static std::optional<HfConfig> read_hf_config_json(const json& doc) {
  if (!doc.is_object()) return std::nullopt;
  HfConfig c;
  if (const auto q = doc.find("quantization_config"); q != doc.end() && q->is_object()) {
    c.quant_method = q->value("quant_method", std::string());
    c.quant_bits = static_cast<unsigned>(first_number(*q, {"bits", "w_bit"}));
    if (c.quant_bits == 0 && q->value("load_in_4bit", false)) c.quant_bits = 4;
    if (c.quant_bits == 0 && q->value("load_in_8bit", false)) c.quant_bits = 8;
  }
  for (const char* key : {"torch_dtype", "dtype"})
    if (const auto it = doc.find(key); it != doc.end() && it->is_string() && c.torch_dtype.empty())
      c.torch_dtype = it->get<std::string>();
  if (const auto a = doc.find("architectures");
      a != doc.end() && a->is_array() && !a->empty() && a->front().is_string())
    c.shape.architecture = a->front().get<std::string>();
  // Multimodal models keep the language model's shape in text_config.
  const json* shape = &doc;
  if (first_number(doc, {"num_hidden_layers", "n_layer", "num_layers"}) == 0)
    if (const auto t = doc.find("text_config"); t != doc.end() && t->is_object()) shape = &*t;
  ModelShape& s = c.shape;
  s.layers = first_number(*shape, {"num_hidden_layers", "n_layer", "num_layers"});
  s.attention_heads = first_number(*shape, {"num_attention_heads", "n_head", "num_heads"});
  s.kv_heads = first_number(*shape, {"num_key_value_heads", "num_kv_heads", "n_head_kv"});
  if (s.kv_heads == 0 && shape->value("multi_query", false)) s.kv_heads = 1;
  if (s.kv_heads == 0) s.kv_heads = s.attention_heads;  // absent: every head has its own K and V
  s.hidden_size = first_number(*shape, {"hidden_size", "n_embd", "d_model"});
  s.key_dim = first_number(*shape, {"head_dim"});
  if (s.key_dim == 0 && s.attention_heads > 0) s.key_dim = s.hidden_size / s.attention_heads;
  s.value_dim = s.key_dim;
  s.context_length =
      first_number(*shape, {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length"});
  if (s.layers == 0 && s.hidden_size == 0 && c.quant_method.empty() && c.torch_dtype.empty())
    return std::nullopt;  // some other program's config.json
  return c;
}

std::optional<HfConfig> read_hf_config(std::string_view text) {
  try {
    return read_hf_config_json(json::parse(text, nullptr, false));
  } catch (const json::exception&) {
    return std::nullopt;  // a value of the wrong type: not a config imgsmith can use
  }
}

std::vector<Model> collect_models(const std::vector<ModelFileAt>& files,
                                  const std::vector<TextFileAt>& configs) {
  // (directory, format, shard group) -> its files, in path order (shards
  // in sequence).
  std::map<std::tuple<std::string, ModelFormat, std::string>, std::vector<const ModelFileAt*>>
      groups;
  for (const auto& f : files)
    groups[{parent_of(f.path), f.file.format, shard_group(f.path)}].push_back(&f);
  std::map<std::string, const TextFileAt*> config_in;
  for (const auto& c : configs)
    if (c.path.ends_with("/config.json") || c.path == "config.json")
      config_in[parent_of(c.path)] = &c;

  std::vector<Model> models;
  for (auto& [key, members] : groups) {
    const std::string& dir = std::get<0>(key);
    std::sort(members.begin(), members.end(),
              [](const ModelFileAt* a, const ModelFileAt* b) { return a->path < b->path; });
    Model m;
    m.format = std::get<1>(key);
    m.path = members.size() == 1 ? members.front()->path : dir + "/";
    for (const ModelFileAt* f : members) {
      m.files.push_back(f->path);
      m.file_bytes += f->file.file_bytes;
      m.weight_bytes += f->file.weight_bytes;
      m.parameters += f->file.parameters;
      m.parameters_known = m.parameters_known && f->file.parameters_known;
      for (const auto& [dtype, n] : f->file.dtype_parameters) m.dtype_parameters[dtype] += n;
      if (!m.shape.has_kv_cache() && f->file.shape.has_kv_cache()) {
        m.shape = f->file.shape;
        m.shape_from = "gguf";
      }
      for (const auto& w : f->file.warnings) m.warnings.push_back(f->path + ": " + w);
    }
    std::uint64_t packed = 0, aux = 0;
    for (const ModelFileAt* f : members) {
      packed += f->file.packed_elements;
      aux += f->file.quantization_aux_elements;
    }
    std::optional<HfConfig> config;
    if (const auto it = config_in.find(dir); it != config_in.end())
      config = read_hf_config(it->second->text);
    if (config && !m.shape.has_kv_cache() && config->shape.has_kv_cache()) {
      m.shape = config->shape;
      m.shape_from = "config.json";
    }
    if (config && !config->quant_method.empty())
      m.quantization =
          config->quant_method +
          (config->quant_bits ? " " + std::to_string(config->quant_bits) + "-bit" : "");
    if (packed > 0) {
      // GPTQ/AWQ: each int32 of a qweight holds 32/bits weights; the
      // scales and zero-points are not parameters.
      unsigned bits = config ? config->quant_bits : 0;
      if (bits == 0 || bits > 32) {
        bits = 4;
        m.warnings.push_back(
            m.path +
            ": packed quantized weights with no config.json saying their bits; read as 4-bit");
      }
      m.parameters =
          m.parameters - packed - std::min(aux, m.parameters - packed) + packed * (32 / bits);
      if (m.quantization.empty()) m.quantization = std::to_string(bits) + "-bit packed";
    }
    if (m.format == ModelFormat::Gguf && m.quantization.empty()) {
      // GGUF: the quantization is the tensor type most weights have.
      std::string top;
      std::uint64_t most = 0;
      for (const auto& [dtype, n] : m.dtype_parameters)
        if (n > most) most = n, top = dtype;
      if (top != "F32" && top != "F16" && top != "BF16") m.quantization = top;
    }
    std::uint64_t most = 0;
    for (const auto& [dtype, n] : m.dtype_parameters)
      if (n > most) most = n, m.stored_dtype = dtype;
    if (!m.parameters_known) m.parameters = 0;
    models.push_back(std::move(m));
  }
  std::sort(models.begin(), models.end(), [](const Model& a, const Model& b) {
    return a.weight_bytes != b.weight_bytes ? a.weight_bytes > b.weight_bytes : a.path < b.path;
  });
  return models;
}

}  // namespace imgsmith
