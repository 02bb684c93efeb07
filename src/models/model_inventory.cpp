// From model files to models: shards grouped by directory and format, the
// config.json beside them read for the transformer's shape and its
// quantization.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>
#include <tuple>

#include "imgsmith/models/vram.hpp"
#include "models_data.hpp"

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

namespace {

// One field of data/model-configs.json: the attribute's name in that
// class, and its default (0: none, or derived).
struct ConfigField {
  std::string key;
  std::uint64_t fallback = 0;
};
// A model_type's defaults (transformers' configuration class): what a
// config.json that leaves a key out means. transformers writes only the
// values that differ from them.
struct ConfigDefaults {
  std::string architecture;  // "decoder", "encoder", "encoder-decoder", "multimodal"
  std::string attention;     // "mha", "gqa", "mqa", "mla"
  std::string text_model_type;
  ConfigField layers, heads, kv_heads, hidden, head_dim, positions;
  ConfigField kv_lora_rank, qk_rope_head_dim;
  // Which layers keep only the last sliding_window tokens: "all",
  // "alternate", "pattern", "after_max_window_layers", or "" (none known).
  std::string sliding_layers;
  std::uint64_t sliding_window = 0;  // the class default
  ConfigField vocab;
};

ConfigField config_field(const json& row, const char* name) {
  ConfigField f;
  if (const auto it = row.find(name); it != row.end() && it->is_object()) {
    f.key = it->value("key", std::string());
    if (const auto d = it->find("default"); d != it->end() && d->is_number_unsigned())
      f.fallback = d->get<std::uint64_t>();
  }
  return f;
}

const std::map<std::string, ConfigDefaults>& config_defaults() {
  static const std::map<std::string, ConfigDefaults> table = [] {
    std::map<std::string, ConfigDefaults> out;
    const json doc = json::parse(models_data().at("model-configs.json"));
    for (const auto& [type, row] : doc.at("model_types").items()) {
      ConfigDefaults d;
      d.architecture = row.value("architecture", std::string());
      d.attention = row.value("attention", std::string());
      d.text_model_type = row.value("text_config_model_type", std::string());
      d.layers = config_field(row, "layers");
      d.heads = config_field(row, "attention_heads");
      d.kv_heads = config_field(row, "kv_heads");
      d.hidden = config_field(row, "hidden_size");
      d.head_dim = config_field(row, "head_dim");
      d.positions = config_field(row, "max_positions");
      d.vocab = config_field(row, "vocab_size");
      d.kv_lora_rank = config_field(row, "kv_lora_rank");
      d.qk_rope_head_dim = config_field(row, "qk_rope_head_dim");
      if (const auto w = row.find("sliding_window"); w != row.end() && w->is_object()) {
        d.sliding_layers = w->value("layers", std::string());
        if (const auto v = w->find("default"); v != w->end() && v->is_number_unsigned())
          d.sliding_window = v->get<std::uint64_t>();
      }
      // A number: the class's KV heads (a string: derived from the heads,
      // which read_hf_config_json does when config.json leaves them out).
      if (const auto r = row.find("kv_heads_default"); r != row.end() && r->is_number_unsigned())
        d.kv_heads.fallback = r->get<std::uint64_t>();
      out.emplace(type, std::move(d));
    }
    return out;
  }();
  return table;
}

// The value of `field` in `shape`: its class's key, then the generic
// `names`, then the class's default (noted in `defaulted`); 0 unknown.
std::uint64_t shape_value(const json& shape, const ConfigField* field,
                          std::initializer_list<const char*> names, const char* what,
                          std::vector<std::string>& defaulted) {
  if (field && !field->key.empty())
    if (const std::uint64_t v = first_number(shape, {field->key.c_str()})) return v;
  if (const std::uint64_t v = first_number(shape, names)) return v;
  if (field && field->fallback) {
    defaulted.push_back(what);
    return field->fallback;
  }
  return 0;
}

// The bits a quantized checkpoint's weights are stored at, 0 for one that
// is not: the config's quantization_config, else the dtype most weights
// have (FP8 and int8 tensors; GGUF's Q4_K, IQ4_XS, Q8_0...: the digit
// after the Q).
unsigned stored_bits(const Model& m, const std::optional<HfConfig>& config) {
  if (config && !config->quant_method.empty() && config->quant_bits > 0) return config->quant_bits;
  const std::string& t = m.stored_dtype;
  if (t.starts_with("F8") || t.starts_with("FLOAT8") || t == "I8" || t == "INT8") return 8;
  if (m.format == ModelFormat::Gguf && !m.quantization.empty()) {
    const std::size_t q = m.quantization.find('Q');
    if (q != std::string::npos && q + 1 < m.quantization.size() &&
        std::isdigit(static_cast<unsigned char>(m.quantization[q + 1])))
      return static_cast<unsigned>(m.quantization[q + 1] - '0');
  }
  return 0;
}

// The layers that keep only the last `sliding_window` tokens of KV cache
// (Mistral, Gemma-2's alternate layers, Gemma-3's five in six): config.json's
// layer_types where it lists them, else the class's rule. A window whose
// layers cannot be told is left out: every layer then keeps the whole
// context, the larger figure.
void read_sliding_window(const json& shape, const ConfigDefaults* d, ModelShape& s) {
  std::uint64_t window = first_number(shape, {"sliding_window"});
  // Absent is the class default; null (Mistral v0.2 on) is no window.
  if (!shape.contains("sliding_window") && d) window = d->sliding_window;
  std::uint64_t sliding = 0;
  if (const auto types = shape.find("layer_types"); types != shape.end() && types->is_array()) {
    for (const auto& t : *types)
      if (t.is_string() && t.get<std::string>() == "sliding_attention") ++sliding;
  } else if (d && window > 0) {
    const std::string& rule = d->sliding_layers;
    if (rule == "all") {
      sliding = s.layers;
    } else if (rule == "alternate") {
      sliding = (s.layers + 1) / 2;  // indices 0, 2, 4...
    } else if (rule == "pattern") {
      std::uint64_t every = first_number(shape, {"sliding_window_pattern"});
      if (every == 0) every = 6;
      sliding = s.layers - s.layers / every;
    } else if (rule == "after_max_window_layers" && shape.value("use_sliding_window", false) &&
               shape.contains("max_window_layers")) {
      const std::uint64_t full = first_number(shape, {"max_window_layers"});
      sliding = s.layers > full ? s.layers - full : 0;
    }
  }
  if (window == 0 || sliding == 0 || sliding > s.layers) return;
  s.sliding_window = window;
  s.sliding_layers = sliding;
}

// A GGUF file gives its window (<arch>.attention.sliding_window) but not
// which layers slide: that is its architecture's rule, as the class
// defaults hold it (gemma2: alternate layers; gemma3: five in six), which
// llama.cpp follows. Without a rule the window is dropped: every layer
// keeps the whole context, the larger figure.
void settle_gguf_window(ModelShape& s) {
  const std::uint64_t window = s.sliding_window;
  if (window == 0 || s.sliding_layers > 0) return;
  s.sliding_window = 0;
  const auto& table = config_defaults();
  // GGUF names the architecture (gemma3) where transformers names the text
  // tower that holds its layers <type>_text (gemma3_text).
  auto row = table.find(s.architecture);
  if (row == table.end() || row->second.sliding_layers.empty())
    row = table.find(s.architecture + "_text");
  if (row == table.end()) return;
  read_sliding_window(json{{"sliding_window", window}}, &row->second, s);
}

}  // namespace

// config.json's fields, completed with its model_type's defaults; nlohmann
// throws on a field of the wrong type, which read_hf_config turns into
// "not a config".
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
  const auto& table = config_defaults();
  const auto defaults_of = [&](const std::string& type) -> const ConfigDefaults* {
    const auto it = table.find(type);
    return it == table.end() ? nullptr : &it->second;
  };
  std::string type = doc.value("model_type", std::string());
  const ConfigDefaults* d = defaults_of(type);
  // Multimodal models keep the language model's shape in text_config, whose
  // model_type defaults to the class's text tower (Llava's: llama). A text
  // tower with no row of its own (mllama_text_model) has its defaults in
  // the multimodal class's row, which describes text_config.
  const json* shape = &doc;
  const bool multimodal = d && d->architecture == "multimodal";
  if (first_number(doc, {"num_hidden_layers", "n_layer", "num_layers"}) == 0 || multimodal) {
    static const json no_text_config = json::object();
    const auto t = doc.find("text_config");
    shape = t != doc.end() && t->is_object() ? &*t : multimodal ? &no_text_config : &doc;
    if (shape != &doc) {
      std::string text_type = shape->value("model_type", std::string());
      if (text_type.empty() && d) text_type = d->text_model_type;
      if (const ConfigDefaults* text = defaults_of(text_type)) {
        type = text_type;
        d = text;
      } else if (!multimodal) {
        type = text_type;
        d = nullptr;
      }
    }
  }
  std::vector<std::string> defaulted;
  ModelShape& s = c.shape;
  s.layers = shape_value(*shape, d ? &d->layers : nullptr,
                         {"num_hidden_layers", "n_layer", "num_layers"}, "layers", defaulted);
  s.attention_heads =
      shape_value(*shape, d ? &d->heads : nullptr, {"num_attention_heads", "n_head", "num_heads"},
                  "heads", defaulted);
  s.kv_heads =
      shape_value(*shape, d ? &d->kv_heads : nullptr,
                  {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, "KV heads", defaulted);
  if (s.kv_heads == 0 && (shape->value("multi_query", false) || (d && d->attention == "mqa")))
    s.kv_heads = 1;
  if (s.kv_heads == 0) s.kv_heads = s.attention_heads;  // absent: every head has its own K and V
  s.hidden_size = shape_value(*shape, d ? &d->hidden : nullptr,
                              {"hidden_size", "n_embd", "d_model"}, "hidden size", defaulted);
  s.key_dim = shape_value(*shape, d ? &d->head_dim : nullptr, {"head_dim"}, "head dim", defaulted);
  if (s.key_dim == 0 && s.attention_heads > 0) s.key_dim = s.hidden_size / s.attention_heads;
  s.value_dim = s.key_dim;
  s.context_length =
      shape_value(*shape, d ? &d->positions : nullptr,
                  {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length"},
                  "positions", defaulted);
  read_sliding_window(*shape, d, s);
  // An MoE token passes through num_experts_per_tok experts of
  // moe_intermediate_size (Qwen-MoE, DeepSeek) or intermediate_size
  // (Mixtral); a dense model through one MLP of intermediate_size.
  std::uint64_t mlp = first_number(*shape, {"moe_intermediate_size"});
  if (mlp == 0) mlp = first_number(*shape, {"intermediate_size", "ffn_dim", "n_inner", "d_ff"});
  if (__builtin_mul_overflow(
          mlp, std::max<std::uint64_t>(first_number(*shape, {"num_experts_per_tok", "top_k"}), 1),
          &s.intermediate_size))
    s.intermediate_size = 0;                 // a width past any model's: unknown, not wrapped
  std::vector<std::string> vocab_defaulted;  // the logits' width only; not a shape field
  s.vocab_size = shape_value(*shape, d ? &d->vocab : nullptr, {"vocab_size", "n_vocab"},
                             "vocabulary", vocab_defaulted);
  if (s.vocab_size == 0)
    s.vocab_size = shape_value(doc, nullptr, {"vocab_size"}, "vocabulary", vocab_defaulted);
  if (d && d->attention == "mla") {
    // Multi-head latent attention (DeepSeek-V2/V3) caches one latent of
    // kv_lora_rank and the rotary key of qk_rope_head_dim a layer, shared
    // by every head: one "head" of both.
    const std::uint64_t latent =
        shape_value(*shape, &d->kv_lora_rank, {"kv_lora_rank"}, "kv_lora_rank", defaulted);
    const std::uint64_t rope = shape_value(*shape, &d->qk_rope_head_dim, {"qk_rope_head_dim"},
                                           "qk_rope_head_dim", defaulted);
    s.kv_heads = 1, s.key_dim = rope, s.value_dim = latent;
    c.attention_note = "multi-head latent attention: a latent of " + std::to_string(latent) +
                       " and a rotary key of " + std::to_string(rope) + " cached a layer";
  }
  c.model_type = type;
  c.encoder_only = d && d->architecture == "encoder";
  if (c.encoder_only) {
    s.kv_heads = 0;  // an encoder keeps no KV cache
    c.attention_note = "an encoder: no KV cache";
  }
  for (const auto& v : defaulted) c.defaulted += (c.defaulted.empty() ? "" : ", ") + v;
  if (!type.empty() && d == nullptr && !s.has_kv_cache() && !c.encoder_only)
    c.warnings.push_back(
        "config.json: model_type '" + type +
        "' is not in imgsmith's table of defaults (data/model-configs.json), and the "
        "keys it leaves out are unknown, not 0: no KV cache is estimated");
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
  // A weight map (model.safetensors.index.json, pytorch_model.bin.index.json)
  // names a checkpoint's shards whatever their names: each shard it lists
  // is of the index's group.
  std::map<std::pair<std::string, std::string>, std::string> indexed;  // (dir, name) -> index
  for (const auto& c : configs) {
    if (!c.path.ends_with(".index.json")) continue;
    const json doc = json::parse(c.text, nullptr, false);
    const auto map = doc.is_object() ? doc.find("weight_map") : doc.end();
    if (map == doc.end() || !map->is_object()) continue;
    const std::string index = c.path.substr(c.path.rfind('/') + 1);
    for (const auto& [tensor, file] : map->items())
      if (file.is_string()) indexed[{parent_of(c.path), file.get<std::string>()}] = index;
  }
  std::map<std::tuple<std::string, ModelFormat, std::string>, std::vector<const ModelFileAt*>>
      groups;
  for (const auto& f : files) {
    const std::string dir = parent_of(f.path);
    const auto index = indexed.find({dir, f.path.substr(f.path.rfind('/') + 1)});
    groups[{dir, f.file.format, index != indexed.end() ? index->second : shard_group(f.path)}]
        .push_back(&f);
  }
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
        settle_gguf_window(m.shape);
      }
      for (const auto& w : f->file.warnings) m.warnings.push_back(f->path + ": " + w);
    }
    std::uint64_t packed = 0, packed_u8 = 0, aux = 0;
    for (const ModelFileAt* f : members) {
      m.kept_16bit += f->file.kept_16bit_elements;
      packed += f->file.packed_elements;
      packed_u8 += f->file.packed_u8_elements;
      aux += f->file.quantization_aux_elements;
    }
    // config.json beside the weights, else one folder up (weights kept in
    // a subfolder of the checkpoint, as some repositories lay them out).
    std::optional<HfConfig> config;
    if (const auto it = config_in.find(dir); it != config_in.end())
      config = read_hf_config(it->second->text);
    else if (const auto up = config_in.find(parent_of(dir)); up != config_in.end())
      config = read_hf_config(up->second->text);
    if (config && !m.shape.has_kv_cache() &&
        (config->shape.has_kv_cache() || config->encoder_only)) {
      m.shape = config->shape;
      m.shape_from = "config.json";
      if (!config->defaulted.empty())
        m.shape_from += " + " + config->model_type + " defaults for " + config->defaulted;
      if (!config->attention_note.empty()) m.shape_from += "; " + config->attention_note;
    }
    if (config)
      for (const auto& w : config->warnings) m.warnings.push_back(m.path + ": " + w);
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
      m.quantized_bits = bits;
    } else if (aux > 0) {
      // bitsandbytes: its quantization state is no parameter, and at 4 bits
      // (NF4/FP4) each uint8 of a `.weight` holds two weights.
      unsigned bits = config ? config->quant_bits : 0;
      if (packed_u8 > 0 && bits == 0) {
        bits = 4;
        m.warnings.push_back(m.path +
                             ": bitsandbytes weights with no config.json saying their bits; "
                             "read as 4-bit");
      }
      // No packed uint8 weights: LLM.int8's int8 weights and their SCB.
      if (bits == 0) bits = 8;
      m.parameters -= std::min(aux, m.parameters);
      if (bits == 4) m.parameters += packed_u8;  // the second weight of each byte
      if (m.quantization.empty()) m.quantization = "bitsandbytes " + std::to_string(bits) + "-bit";
      m.quantized_bits = bits;
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
    if (m.quantized_bits == 0) m.quantized_bits = stored_bits(m, config);
    m.kept_16bit = std::min(m.kept_16bit, m.parameters);
    if (!m.parameters_known) m.parameters = 0;
    models.push_back(std::move(m));
  }
  std::sort(models.begin(), models.end(), [](const Model& a, const Model& b) {
    return a.weight_bytes != b.weight_bytes ? a.weight_bytes > b.weight_bytes : a.path < b.path;
  });
  return models;
}

}  // namespace imgsmith
