// Each serving engine's memory budget: data/vram.json's "engines", applied
// to a model's shape and a board.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "imgsmith/models/vram.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"
#include "models_data.hpp"
#include "serving_costs.hpp"

namespace imgsmith {
namespace {

using models_detail::saturating_product;
using models_detail::saturating_sum;

using nlohmann::json;

struct BatchDefaults {
  std::uint64_t min_cuda_total = 0;
  std::uint64_t batched_tokens = 0, seqs = 0;
};

struct EngineConstants {
  double vllm_utilization = 0.9;
  double vllm_largest_utilization = 0.95;
  std::uint64_t vllm_block = 16;
  std::vector<BatchDefaults> vllm_batches;  // largest boards first
  std::uint64_t vllm_non_torch_one = 0, vllm_non_torch_tp = 0;
  double vllm_sampler_bytes_per_logit = 0;
  std::uint64_t vllm_fp8_bytes = 1;
  std::uint64_t llama_ubatch = 512;
  double activation_fraction = 0.2;
  std::uint64_t cuda_context = 0;
};

const EngineConstants& engine_constants() {
  static const EngineConstants c = [] {
    EngineConstants out;
    const json doc = json::parse(models_data().at("vram.json"));
    const json& engines = doc.at("engines");
    const json& v = engines.at("vllm");
    out.vllm_utilization = v.at("gpu_memory_utilization").get<double>();
    out.vllm_largest_utilization = v.at("largest_suggested_utilization").get<double>();
    out.vllm_block = v.at("block_size").get<std::uint64_t>();
    for (const auto& d : v.at("serve_defaults"))
      out.vllm_batches.push_back(
          BatchDefaults{static_cast<std::uint64_t>(d.at("min_cuda_total_gib").get<double>() *
                                                   static_cast<double>(1ull << 30)),
                        d.at("max_num_batched_tokens").get<std::uint64_t>(),
                        d.at("max_num_seqs").get<std::uint64_t>()});
    std::sort(out.vllm_batches.begin(), out.vllm_batches.end(),
              [](const BatchDefaults& a, const BatchDefaults& b) {
                return a.min_cuda_total > b.min_cuda_total;
              });
    out.vllm_non_torch_one = v.at("non_torch_bytes_one_gpu").get<std::uint64_t>();
    out.vllm_non_torch_tp = v.at("non_torch_bytes_per_gpu_tensor_parallel").get<std::uint64_t>();
    out.vllm_sampler_bytes_per_logit = v.at("sampler_bytes_per_logit").get<double>();
    out.vllm_fp8_bytes = v.at("kv_cache_dtype_fp8_bytes_per_element").get<std::uint64_t>();
    out.llama_ubatch = engines.at("llama.cpp").at("n_ubatch").get<std::uint64_t>();
    out.activation_fraction = doc.at("activation_fraction").get<double>();
    out.cuda_context = doc.at("cuda_context_bytes").get<std::uint64_t>();
    return out;
  }();
  return c;
}

std::uint64_t ceil_div(std::uint64_t a, unsigned b) {
  b = std::max(b, 1u);
  return a / b + (a % b != 0 ? 1 : 0);
}

std::uint64_t bytes_of(double v) {
  return v >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(std::ceil(std::max(v, 0.0)));
}

// vLLM's `vllm serve` batch for a board of `cuda_total` bytes.
BatchDefaults vllm_batch(const ServingSettings& s, std::uint64_t cuda_total,
                         std::string_view gpu_name) {
  const EngineConstants& c = engine_constants();
  BatchDefaults d = c.vllm_batches.back();
  // The larger defaults skip A100s (arg_utils: '"a100" not in device_name').
  const bool a100 = to_lower(gpu_name).find("a100") != std::string::npos;
  for (const BatchDefaults& b : c.vllm_batches)
    if (cuda_total >= b.min_cuda_total && (b.min_cuda_total == 0 || !a100)) {
      d = b;
      break;
    }
  if (s.max_num_batched_tokens) d.batched_tokens = *s.max_num_batched_tokens;
  if (s.max_num_seqs) d.seqs = *s.max_num_seqs;
  // vLLM caps the sequences at the tokens (arg_utils: min(max_num_seqs,
  // max_num_batched_tokens)).
  d.seqs = std::min(d.seqs, d.batched_tokens);
  return d;
}

std::string gib(std::uint64_t bytes) {
  if (bytes == UINT64_MAX) return "more than any GPU";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

}  // namespace

namespace models_detail {

std::uint64_t kv_bytes_per_element(const VramEstimate& e) {
  return e.engine == Engine::Vllm && e.serving.kv_fp8 ? engine_constants().vllm_fp8_bytes : 2;
}

std::uint64_t non_torch(const VramEstimate& e, unsigned gpus) {
  const EngineConstants& c = engine_constants();
  if (e.engine != Engine::Vllm) return c.cuda_context;
  return gpus > 1 ? c.vllm_non_torch_tp : c.vllm_non_torch_one;
}

std::uint64_t activation_peak(const VramEstimate& e, std::uint64_t weights, unsigned gpus,
                              std::uint64_t batched_tokens, std::uint64_t seqs,
                              std::uint64_t kv_tokens) {
  const EngineConstants& c = engine_constants();
  gpus = std::max(gpus, 1u);
  const double share =
      static_cast<double>(weights) * c.activation_fraction / static_cast<double>(gpus);
  switch (e.engine) {
    case Engine::Vllm: {
      if (!e.activations_from_shape) return bytes_of(share);
      const double forward =
          static_cast<double>(batched_tokens) *
          (3.0 * static_cast<double>(e.intermediate_size) / gpus + 3.0 * e.hidden_size) * 2.0;
      const double sampler = static_cast<double>(seqs) * static_cast<double>(e.vocab_size) *
                             c.vllm_sampler_bytes_per_logit;
      return bytes_of(std::max(forward, sampler));
    }
    case Engine::LlamaCpp: {
      if (e.vocab_size == 0 || e.attention_heads == 0) return bytes_of(share);
      // n_ctx is every slot's tokens: context x batch.
      return bytes_of(static_cast<double>(c.llama_ubatch) *
                      (static_cast<double>(e.vocab_size) +
                       2.0 * static_cast<double>(kv_tokens) * e.attention_heads) *
                      4.0);
    }
    case Engine::Transformers:
      break;
  }
  return bytes_of(share);
}

std::uint64_t small_board_batched_tokens(const ServingSettings& s) {
  return vllm_batch(s, 0, "").batched_tokens;
}
std::uint64_t small_board_seqs(const ServingSettings& s) { return vllm_batch(s, 0, "").seqs; }

}  // namespace models_detail

std::string_view engine_name(Engine engine) {
  switch (engine) {
    case Engine::Vllm:
      return "vllm";
    case Engine::LlamaCpp:
      return "llama.cpp";
    case Engine::Transformers:
      return "transformers";
  }
  return "transformers";
}

std::optional<Engine> parse_engine(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "vllm") return Engine::Vllm;
  if (t == "llama.cpp" || t == "llamacpp" || t == "llama-cpp") return Engine::LlamaCpp;
  if (t == "transformers") return Engine::Transformers;
  return std::nullopt;
}

Engine engine_for(const Model& model) {
  switch (model.format) {
    case ModelFormat::Gguf:
      return Engine::LlamaCpp;
    case ModelFormat::Safetensors:
      return Engine::Vllm;
    default:
      return Engine::Transformers;
  }
}

std::uint64_t VramEstimate::kv_split(std::uint64_t bytes, unsigned gpus) const {
  gpus = std::max(gpus, 1u);
  const std::uint64_t ways = kv_heads > 0 ? std::min<std::uint64_t>(gpus, kv_heads) : gpus;
  return bytes / ways + (bytes % ways != 0 ? 1 : 0);
}

std::uint64_t VramEstimate::per_gpu(const PrecisionNeed& need, unsigned gpus) const {
  gpus = std::max(gpus, 1u);
  if (need.weights == UINT64_MAX || need.kv_cache == UINT64_MAX || need.activations == UINT64_MAX)
    return UINT64_MAX;
  const std::uint64_t activations = models_detail::activation_peak(
      *this, need.weights, gpus, models_detail::small_board_batched_tokens(serving),
      models_detail::small_board_seqs(serving), saturating_product({context, batch}));
  return saturating_sum({ceil_div(need.weights, gpus), kv_split(need.kv_cache, gpus), activations,
                         models_detail::non_torch(*this, gpus)});
}

ServingBudget serving_budget(const VramEstimate& e, Precision precision, const GpuTarget& target) {
  const EngineConstants& c = engine_constants();
  ServingBudget b;
  b.engine = e.engine;
  b.gpu = target.text();
  b.gpus = std::max(target.count, 1u);
  b.board_measured = target.gpu.cuda_total_bytes > 0;
  b.board = budget_board_bytes(target.gpu);
  b.utilization =
      e.engine == Engine::Vllm ? e.serving.gpu_memory_utilization.value_or(c.vllm_utilization) : 1;
  b.usable = bytes_of(std::floor(static_cast<double>(b.board) * b.utilization));
  b.context = e.context;
  b.batch = e.batch;
  const PrecisionNeed* need = e.at(precision);
  if (need == nullptr) return b;
  if (e.engine == Engine::Vllm) {
    const BatchDefaults d = vllm_batch(e.serving, b.board, target.gpu.name);
    b.max_num_batched_tokens = d.batched_tokens;
    b.max_num_seqs = d.seqs;
  }
  b.weights = ceil_div(need->weights, b.gpus);
  b.kv_needed = e.kv_split(need->kv_cache, b.gpus);
  b.kv_bytes_per_token = e.kv_split(need->kv_bytes_per_token, b.gpus);
  // vLLM allocates whole blocks: a sequence of C tokens takes ceil(C / 16)
  // of them (where no layer slides; a window's blocks are its own count).
  const bool slides =
      need->kv_cache < saturating_product({need->kv_bytes_per_token, e.context, e.batch});
  if (e.engine == Engine::Vllm && !slides && e.context > 0)
    b.kv_needed =
        std::max(b.kv_needed,
                 saturating_product({(e.context + c.vllm_block - 1) / c.vllm_block * c.vllm_block,
                                     e.batch, b.kv_bytes_per_token}));
  b.non_torch = models_detail::non_torch(e, b.gpus);
  b.activation_peak = need->activations == UINT64_MAX
                          ? UINT64_MAX
                          : models_detail::activation_peak(
                                e, need->weights, b.gpus, b.max_num_batched_tokens, b.max_num_seqs,
                                saturating_product({e.context, e.batch}));
  const std::uint64_t fixed = saturating_sum({b.weights, b.non_torch, b.activation_peak});
  b.need = saturating_sum({fixed, b.kv_needed});
  b.fits = b.need <= b.usable;
  b.kv_available = fixed < b.usable ? b.usable - fixed : 0;
  if (b.kv_bytes_per_token > 0) {
    b.kv_tokens = b.kv_available / b.kv_bytes_per_token;
    if (e.engine == Engine::Vllm) b.kv_tokens -= b.kv_tokens % c.vllm_block;
  }
  if (const std::uint64_t per_sequence = b.kv_needed / std::max<std::uint64_t>(b.batch, 1))
    b.sequences = b.kv_available / per_sequence;
  if (!b.fits && e.engine == Engine::Vllm && b.board > 0 && b.need != UINT64_MAX) {
    // The least share, rounded up to a hundredth, that holds the need.
    const double least =
        std::ceil(static_cast<double>(b.need) / static_cast<double>(b.board) * 100.0 - 1e-9) /
        100.0;
    if (least <= c.vllm_largest_utilization) b.fits_at_utilization = least;
  }
  return b;
}

std::uint64_t board_free_needed(const VramEstimate& e, std::uint64_t need) {
  if (e.engine != Engine::Vllm || need == UINT64_MAX) return need;
  const double share =
      e.serving.gpu_memory_utilization.value_or(engine_constants().vllm_utilization);
  return bytes_of(static_cast<double>(need) / share);
}

std::string ServingBudget::verdict() const {
  if (fits) {
    std::string out = "fits: room for " + format_count(kv_tokens) + " tokens of KV cache";
    if (context > 0)
      out += " (" + format_count(sequences) + " sequence" + (sequences == 1 ? "" : "s") + " at " +
             format_count(context) + ")";
    return out;
  }
  char share[16];
  std::snprintf(share, sizeof share, "%.2f", utilization);
  std::string out = "does not fit: needs " + gib(need) + (gpus > 1 ? " per GPU" : "") + ", has " +
                    gib(usable) +
                    (engine == Engine::Vllm ? std::string(" (") + share + " of " + gib(board) + ")"
                                            : std::string());
  if (fits_at_utilization) {
    char at[16];
    std::snprintf(at, sizeof at, "%.2f", *fits_at_utilization);
    const bool is_default = std::abs(utilization - engine_constants().vllm_utilization) < 1e-9;
    out = std::string("does not fit under vLLM's ") + (is_default ? "default " : "") + share +
          "; fits with --gpu-memory-utilization " + at + " (needs " + gib(need) + " of " +
          gib(board) + ")";
  }
  return out;
}

std::string ServingBudget::breakdown() const {
  char share[16];
  std::snprintf(share, sizeof share, "%.2f", utilization);
  std::string out = std::string(engine_name(engine)) + " on " + gpu + ": ";
  if (engine == Engine::Vllm)
    out += "total_gpu_memory " + gib(board) + (board_measured ? "" : " (98% of the data sheet's)") +
           " x gpu_memory_utilization " + share + " = " + gib(usable) + "; model weights take " +
           gib(weights) + "; non_torch_memory takes " + gib(non_torch) +
           "; activation peak takes " + gib(activation_peak) + " (" +
           format_count(max_num_batched_tokens) + " batched tokens, " + format_count(max_num_seqs) +
           " sequences); the rest for KV cache is " + gib(kv_available);
  else
    out += gib(board) + (board_measured ? "" : " (98% of the data sheet's)") + "; weights " +
           gib(weights) + "; " + (engine == Engine::LlamaCpp ? "compute buffer " : "activations ") +
           gib(activation_peak) + "; CUDA context " + gib(non_torch) + "; KV cache " +
           gib(kv_needed) + " of " + gib(kv_available) + " left";
  return out + (gpus > 1 ? " (per GPU)" : "");
}

}  // namespace imgsmith
