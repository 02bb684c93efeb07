// The VRAM estimate: data/vram.json's formula and constants, data/gpus.json's
// GPUs.
#include "imgsmith/models/vram.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"
#include "models_data.hpp"
#include "serving_costs.hpp"

namespace imgsmith {
namespace {

using models_detail::saturating_product;
using models_detail::saturating_sum;

using nlohmann::json;

struct QuantizedPrecision {
  unsigned bits = 16;
  std::uint64_t group_size = 0;
  double group_overhead_bytes = 0;
};

struct VramConstants {
  std::map<std::string, QuantizedPrecision> precisions;
  std::uint64_t kv_bytes_per_element = 2;
  double activation_fraction = 0.2;
  std::uint64_t cuda_context_bytes = 0;
  std::string assumptions;
  std::vector<std::string> float32_at_16_bits;  // engines_serving_float32_at_16_bits
};

const VramConstants& constants() {
  static const VramConstants c = [] {
    VramConstants out;
    const json doc = json::parse(models_data().at("vram.json"));
    for (const auto& p : doc.at("precisions")) {
      QuantizedPrecision q;
      q.bits = p.value("bits", 16u);
      q.group_size = p.value("group_size", std::uint64_t{0});
      q.group_overhead_bytes = p.value("group_overhead_bytes", 0.0);
      out.precisions[p.at("name").get<std::string>()] = q;
    }
    out.kv_bytes_per_element = doc.at("kv_cache_bytes_per_element").get<std::uint64_t>();
    out.activation_fraction = doc.at("activation_fraction").get<double>();
    out.cuda_context_bytes = doc.at("cuda_context_bytes").get<std::uint64_t>();
    out.float32_at_16_bits =
        doc.at("engines_serving_float32_at_16_bits").at("packages").get<std::vector<std::string>>();
    out.assumptions = doc.at("kv_cache_about").get<std::string>() +
                      ". Activations: " + doc.at("activation_source").get<std::string>() +
                      ". CUDA context: " + doc.at("cuda_context_source").get<std::string>() + ". " +
                      doc.at("quantized_everything").get<std::string>();
    return out;
  }();
  return c;
}

std::uint64_t weights_at(const Model& m, Precision p) {
  if (p == Precision::Stored) return m.weight_bytes;
  const QuantizedPrecision& q = constants().precisions.at(std::string(precision_name(p)));
  // At 8 or 4 bits the quantizer leaves embeddings, LM head, norms and
  // biases at 16; the rest takes the bits and the groups' scales.
  const double kept = q.bits < 16 ? static_cast<double>(std::min(m.kept_16bit, m.parameters)) : 0;
  const double quantized = static_cast<double>(m.parameters) - kept;
  double bytes = kept * 2 + quantized * q.bits / 8.0;
  if (q.group_size > 0)
    bytes += std::ceil(quantized / static_cast<double>(q.group_size)) * q.group_overhead_bytes;
  // 1.8e19 is past any GPU; saturating keeps a huge claim huge.
  return bytes >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(std::ceil(bytes));
}

// An int8/int4 row of a checkpoint stored at as few bits or fewer: what it
// holds already; quantizing it again saves nothing.
bool already_at(const Model& m, Precision p) {
  if (m.quantized_bits == 0 || p == Precision::Stored) return false;
  const unsigned bits = constants().precisions.at(std::string(precision_name(p))).bits;
  return bits < 16 && m.quantized_bits <= bits;
}

}  // namespace

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::Stored:
      return "stored";
    case Precision::Bf16:
      return "bf16";
    case Precision::Int8:
      return "int8";
    case Precision::Int4:
      return "int4";
  }
  return "stored";
}

std::optional<Precision> parse_precision(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "stored") return Precision::Stored;
  if (t == "bf16" || t == "fp16" || t == "float16" || t == "bfloat16") return Precision::Bf16;
  if (t == "int8") return Precision::Int8;
  if (t == "int4") return Precision::Int4;
  return std::nullopt;
}

std::uint64_t model_capture(std::string_view path, std::uint64_t size) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  // config.json is small; a larger one is not a model's.
  if (name == "config.json" && size <= (1u << 20)) return size;
  // A sharded checkpoint's weight map: which files are its shards (tens of
  // kB; a model of thousands of tensors, a few MB).
  if (name.ends_with(".index.json") && size <= (16u << 20)) return size;
  // A Hugging Face cache's config.json is a nameless blob: its small blobs
  // and refs are kept, and resolve_hf_caches finds which is which.
  if (hf_cache_text(path, size)) return size;
  // An ONNX graph whose weights are external data is small; its first
  // bytes tell whether it is one.
  if (name.ends_with(".onnx") && size >= 16) return kModelHeadBytes;
  return 0;
}

const PrecisionNeed* VramEstimate::at(Precision precision) const {
  for (const auto& n : needs)
    if (n.precision == precision) return &n;
  return nullptr;
}

void VramEstimate::take_shape(const ModelShape& s) {
  hidden_size = s.hidden_size;
  intermediate_size = s.intermediate_size;
  vocab_size = s.vocab_size;
  attention_heads = s.attention_heads;
  kv_heads = s.kv_heads;
  activations_from_shape = s.hidden_size > 0 && s.intermediate_size > 0 && s.vocab_size > 0;
}

VramEstimate estimate_vram(const Model& model, const VramSettings& settings) {
  const VramConstants& c = constants();
  VramEstimate e;
  e.batch = std::max<std::uint64_t>(settings.batch, 1);
  e.serving = settings.serving;
  e.engine = settings.serving.engine.value_or(engine_for(model));
  const ModelShape& s = model.shape;
  e.take_shape(s);
  if (e.engine == Engine::Vllm && !e.activations_from_shape)
    e.engine_note = "vLLM's activation peak is taken as " +
                    format_count(static_cast<std::uint64_t>(c.activation_fraction * 100)) +
                    "% of the weights: the model's config gives no " +
                    (s.hidden_size == 0         ? "hidden size"
                     : s.intermediate_size == 0 ? "MLP width (intermediate_size)"
                                                : "vocabulary size") +
                    " to size its profile run";
  // vLLM's --dtype auto loads float32 weights at 16 bits (data/vram.json).
  const bool served_at_16_bits = e.engine == Engine::Vllm && stored_as_float32(model);
  if (served_at_16_bits)
    e.engine_note += std::string(e.engine_note.empty() ? "" : "; ") +
                     "vLLM loads these float32 weights at 16 bits (--dtype auto), so the stored "
                     "row counts them at 2 bytes";
  // vLLM's settings given for a model another engine serves: said, not
  // applied.
  const ServingSettings& asked = e.serving;
  if (e.engine != Engine::Vllm && (asked.kv_fp8 || asked.gpu_memory_utilization ||
                                   asked.max_num_batched_tokens || asked.max_num_seqs))
    e.engine_note += std::string(e.engine_note.empty() ? "" : "; ") +
                     "--kv-dtype fp8, --gpu-memory-utilization and --max-num-* are vLLM's: " +
                     std::string(engine_name(e.engine)) +
                     " serves this model, so they are not applied (--engine vllm to apply them)";
  const std::uint64_t kv_element = models_detail::kv_bytes_per_element(e);
  // One layer's K and V for one token; the layers that slide keep only
  // their window of the context.
  std::uint64_t per_layer_token = 0, layer_tokens = 0;
  if (s.has_kv_cache()) {
    per_layer_token =
        saturating_product({s.kv_heads, saturating_sum({s.key_dim, s.value_dim}), kv_element});
    e.kv_bytes_per_token = saturating_product({s.layers, per_layer_token});
    e.context = settings.context ? *settings.context : s.context_length;
    layer_tokens = s.cached_layer_tokens(e.context);
    e.kv_cache_bytes = saturating_product({per_layer_token, layer_tokens, e.batch});
  }
  std::vector<Precision> precisions{Precision::Stored};
  if (model.parameters_known && model.parameters > 0)
    precisions.insert(precisions.end(), {Precision::Bf16, Precision::Int8, Precision::Int4});
  for (const Precision p : precisions) {
    PrecisionNeed n;
    n.precision = p;
    n.as_stored = already_at(model, p);
    n.weights = n.as_stored ? model.weight_bytes : weights_at(model, p);
    std::uint64_t per = per_layer_token;
    if (p == Precision::Stored && stored_as_float32(model)) {
      if (served_at_16_bits)
        n.weights = model.weight_bytes / 2 + model.weight_bytes % 2;
      else if (e.engine == Engine::Transformers)
        per = saturating_product({per, 2});  // float32 activations
    }
    n.kv_bytes_per_token = saturating_product({per, s.layers});
    n.kv_cache = saturating_product({per, layer_tokens, e.batch});
    n.activations = models_detail::activation_peak(
        e, n.weights, 1, models_detail::small_board_batched_tokens(e.serving),
        models_detail::small_board_seqs(e.serving), saturating_product({e.context, e.batch}));
    n.cuda_context = models_detail::non_torch(e, 1);
    n.total = saturating_sum({n.weights, n.kv_cache, n.activations, n.cuda_context});
    e.needs.push_back(std::move(n));
  }
  // Which boards hold each row: the engine's own budget on each.
  for (auto& n : e.needs)
    for (const Gpu& gpu : known_gpus())
      if (serving_budget(e, n.precision, GpuTarget{gpu, 1}).fits) n.fits_on.push_back(gpu.name);
  return e;
}

const std::vector<Gpu>& known_gpus() {
  static const std::vector<Gpu> gpus = [] {
    std::vector<Gpu> out;
    const json doc = json::parse(models_data().at("gpus.json"));
    for (const auto& g : doc.at("gpus")) {
      // "10.3" -> 103: the minor is one digit in every compute capability.
      const std::string cc = g.at("compute_capability").get<std::string>();
      const std::size_t dot = cc.find('.');
      const unsigned capability = dot == std::string::npos || dot + 2 != cc.size()
                                      ? 0
                                      : static_cast<unsigned>(std::stoul(cc.substr(0, dot)) * 10 +
                                                              std::stoul(cc.substr(dot + 1)));
      out.push_back(Gpu{g.at("name").get<std::string>(),
                        static_cast<std::uint64_t>(g.at("memory_gb").get<double>() * 1e9),
                        static_cast<std::uint64_t>(g.value("cuda_total_gib", 0.0) *
                                                   static_cast<double>(1ull << 30)),
                        capability});
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Gpu& a, const Gpu& b) { return a.memory_bytes < b.memory_bytes; });
    return out;
  }();
  return gpus;
}

std::uint64_t budget_board_bytes(const Gpu& gpu) {
  static const double share = [] {
    return json::parse(models_data().at("gpus.json")).at("cuda_total_fallback_share").get<double>();
  }();
  if (gpu.cuda_total_bytes > 0) return gpu.cuda_total_bytes;
  return static_cast<std::uint64_t>(std::floor(static_cast<double>(gpu.memory_bytes) * share));
}

std::string fits_on_text(const std::vector<std::string>& fits_on) {
  if (fits_on.empty()) return "";
  const auto& gpus = known_gpus();
  auto first = std::find_if(gpus.begin(), gpus.end(),
                            [&](const Gpu& g) { return g.name == fits_on.front(); });
  const auto after = static_cast<std::size_t>(gpus.end() - first);
  if (after == fits_on.size() &&
      std::equal(first, gpus.end(), fits_on.begin(),
                 [](const Gpu& g, const std::string& name) { return g.name == name; }))
    return first == gpus.begin() ? "every GPU of the table" : fits_on.front() + " and larger";
  std::string out;
  for (std::size_t i = 0; i < fits_on.size() && i < 3; ++i)
    out += (i == 0 ? "" : ", ") + fits_on[i];
  if (fits_on.size() > 3) out += " and " + std::to_string(fits_on.size() - 3) + " more";
  return out;
}

std::string GpuTarget::text() const {
  return count > 1 ? gpu.name + "x" + std::to_string(count) : gpu.name;
}

namespace {

// A GPU's name as users type it: case, '-', '_' and spaces do not matter
// ("rtx4090", "RTX 4090" and "RTX-4090" are one GPU).
std::string squashed(std::string_view name) {
  std::string out;
  for (const char c : to_lower(name))
    if (c != '-' && c != '_' && c != ' ') out += c;
  return out;
}

const Gpu* gpu_named(std::string_view name) {
  for (const Gpu& gpu : known_gpus())
    if (squashed(gpu.name) == squashed(name)) return &gpu;
  return nullptr;
}

std::string gpu_names() {
  std::string names;
  for (const Gpu& gpu : known_gpus()) names += (names.empty() ? "" : ", ") + gpu.name;
  return names;
}

// "unknown GPU (one of: ...); did you mean H100?" for `flag` given `name`.
InputError unknown_gpu(const std::string& flag, std::string_view given, std::string_view name,
                       const std::string& hint) {
  std::vector<std::string> names;
  for (const Gpu& gpu : known_gpus()) names.push_back(gpu.name);
  const auto near = closest_match(name, names);
  return InputError(flag + " '" + std::string(given) + "': unknown GPU (one of: " + gpu_names() +
                    hint + ")" + (near ? "; did you mean " + *near + "?" : std::string()));
}

}  // namespace

GpuTarget parse_gpu_target(std::string_view text) {
  // The whole text first: a GPU's own name may end in x and digits.
  if (const Gpu* gpu = gpu_named(text)) return GpuTarget{*gpu, 1};
  std::string name(text);
  unsigned long count = 1;
  // NAMExN: the count after the last x, when it is all digits.
  if (const std::size_t x = to_lower(name).rfind('x');
      x != std::string::npos && x + 1 < name.size() &&
      std::all_of(name.begin() + static_cast<long>(x) + 1, name.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    const std::string digits = name.substr(x + 1);
    count = digits.size() > 4 ? 0 : std::stoul(digits);
    name = name.substr(0, x);
  }
  // An unknown name before the count is the mistake to name ("RTX3090"
  // is no GPU with 3090 of them).
  const Gpu* gpu = gpu_named(name);
  if (gpu == nullptr)
    throw unknown_gpu("--fits", text, count >= 1 && count <= 1024 ? name : std::string(text),
                      "; add xN for N of them, e.g. A100-80GBx2");
  if (count == 0 || count > 1024)
    throw InputError("--fits '" + std::string(text) + "': the GPU count is 1 to 1024");
  return GpuTarget{*gpu, static_cast<unsigned>(count)};
}

std::vector<Gpu> parse_gpu_list(const std::vector<std::string>& items) {
  std::vector<Gpu> out;
  for (const auto& item : items)
    for (const auto& part : split(item, ",")) {
      const std::string name(trim(part));
      if (name.empty()) continue;
      const Gpu* gpu = gpu_named(name);
      if (gpu == nullptr)
        throw unknown_gpu("--gpu", name, name,
                          "; data/gpus.json lists them with their compute capability");
      if (std::none_of(out.begin(), out.end(), [&](const Gpu& g) { return g.name == gpu->name; }))
        out.push_back(*gpu);
    }
  if (out.empty()) throw InputError("--gpu: no GPU named (one of: " + gpu_names() + ")");
  return out;
}

std::string vram_assumptions() { return constants().assumptions; }

bool stored_as_float32(const Model& m) {
  return m.stored_dtype == "F32" || m.stored_dtype == "FLOAT";
}

const std::vector<std::string>& engines_serving_float32_at_16_bits() {
  return constants().float32_at_16_bits;
}

}  // namespace imgsmith
