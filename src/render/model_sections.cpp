#include "model_sections.hpp"

#include <algorithm>
#include <cstdio>

#include "format.hpp"
#include "imgsmith/models/model_json.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::render_detail {
namespace {

using nlohmann::json;

json shape_json(const Model& m) {
  if (m.shape_from.empty()) return nullptr;
  json shape = shape_to_json(m.shape);
  shape["from"] = m.shape_from;
  return shape;
}

ModelFormat format_named(const std::string& name) {
  for (const ModelFormat f :
       {ModelFormat::Safetensors, ModelFormat::PyTorch, ModelFormat::Gguf, ModelFormat::Onnx})
    if (model_format_name(f) == name) return f;
  return ModelFormat::None;
}

// "6.74 B" / "124 M" parameters.
std::string short_count(std::uint64_t n) {
  if (n >= 1'000'000'000) return fmt("%.2f B", static_cast<double>(n) / 1e9);
  if (n >= 1'000'000) return fmt("%.1f M", static_cast<double>(n) / 1e6);
  return format_count(n);
}

std::string dtype_mix(const Model& m) {
  std::string out;
  for (const auto& [dtype, n] : m.dtype_parameters)
    out += (out.empty() ? "" : ", ") + dtype +
           (m.dtype_parameters.size() > 1 && m.parameters > 0
                ? fmt(" %.1f%%", 100.0 * static_cast<double>(n) / static_cast<double>(m.parameters))
                : std::string());
  return out;
}

// "L40S and larger", "none of the table".
std::string fits_text(const PrecisionNeed& n) {
  if (n.fits_on.empty()) return "none alone (--fits NAMExN for several)";
  return fits_on_text(n.fits_on);
}

// The budget a report shows beside the table: the stored row on the
// smallest GPU it fits, or else on the largest of the table.
std::optional<ServingBudget> shown_budget(const VramEstimate& v) {
  // Without a KV cache there is no room to tell of: the table says it all.
  const PrecisionNeed* stored = v.at(Precision::Stored);
  if (stored == nullptr || stored->kv_bytes_per_token == 0 || known_gpus().empty())
    return std::nullopt;
  const Gpu* on = &known_gpus().back();
  for (const Gpu& gpu : known_gpus())
    if (!stored->fits_on.empty() && gpu.name == stored->fits_on.front()) on = &gpu;
  return serving_budget(v, Precision::Stored, GpuTarget{*on, 1});
}

json budget_json(const ServingBudget& b) {
  json out = {{"engine", std::string(engine_name(b.engine))},
              {"gpu", b.gpu},
              {"board_bytes", b.board},
              {"board_measured", b.board_measured},
              {"utilization", b.utilization},
              {"usable_bytes", b.usable},
              {"weights", b.weights},
              {"non_torch", b.non_torch},
              {"activation_peak", b.activation_peak},
              {"kv_needed", b.kv_needed},
              {"kv_available", b.kv_available},
              {"kv_tokens", b.kv_tokens},
              {"sequences", b.sequences},
              {"fits", b.fits},
              {"verdict", b.verdict()}};
  if (b.engine == Engine::Vllm) {
    out["max_num_batched_tokens"] = b.max_num_batched_tokens;
    out["max_num_seqs"] = b.max_num_seqs;
  }
  if (b.fits_at_utilization) out["fits_at_utilization"] = *b.fits_at_utilization;
  return out;
}

// The serving settings as asked, so that a report read back budgets as
// the one written.
json settings_json(const ServingSettings& s) {
  const auto or_null = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  return {{"gpu_memory_utilization", or_null(s.gpu_memory_utilization)},
          {"kv_fp8", s.kv_fp8},
          {"max_num_batched_tokens", or_null(s.max_num_batched_tokens)},
          {"max_num_seqs", or_null(s.max_num_seqs)}};
}

ServingSettings settings_from_json(const json& j) {
  ServingSettings s;
  if (!j.is_object()) return s;
  if (const auto u = j.find("gpu_memory_utilization"); u != j.end() && u->is_number())
    s.gpu_memory_utilization = u->get<double>();
  s.kv_fp8 = j.value("kv_fp8", false);
  if (const auto t = j.find("max_num_batched_tokens"); t != j.end() && t->is_number_unsigned())
    s.max_num_batched_tokens = t->get<std::uint64_t>();
  if (const auto q = j.find("max_num_seqs"); q != j.end() && q->is_number_unsigned())
    s.max_num_seqs = q->get<std::uint64_t>();
  return s;
}

std::string precision_label(const Model& m, const PrecisionNeed& n) {
  if (n.precision != Precision::Stored)
    return std::string(precision_name(n.precision)) + (n.as_stored ? " (as stored)" : "");
  const std::string as = m.quantization.empty() ? m.stored_dtype : m.quantization;
  return as.empty() ? "stored" : "stored " + as;
}

std::string shape_line(const Model& m, const VramEstimate& v) {
  const ModelShape& s = m.shape;
  std::string line = visible(s.architecture.empty() ? "transformer" : s.architecture) + " (" +
                     m.shape_from + "): " + format_count(s.layers) + " layers, " +
                     (s.kv_heads > 0 ? format_count(s.kv_heads) + " KV heads of " : std::string()) +
                     format_count(s.attention_heads) + (s.kv_heads > 0 ? "" : " heads") +
                     ", head dim " + format_count(s.key_dim);
  if (v.kv_bytes_per_token > 0)
    line += "; KV cache " + format_size(v.kv_bytes_per_token * 1000) + " per 1,000 tokens, " +
            format_size(v.kv_cache_bytes) + " at " + format_count(v.context) + " tokens" +
            (v.batch > 1 ? " x batch " + format_count(v.batch) : std::string()) +
            (s.context_length > 0 && v.context != s.context_length
                 ? " (max " + format_count(s.context_length) + ")"
                 : std::string(" (its maximum)"));
  if (s.sliding_layers > 0)
    line += "; " + format_count(s.sliding_layers) + " of " + format_count(s.layers) +
            " layers keep a window of " + format_count(s.sliding_window) + " tokens";
  return line;
}

}  // namespace

json models_to_json(const std::vector<ModelReport>& models) {
  json out = json::array();
  for (const auto& [m, v] : models) {
    json needs = json::array();
    for (const auto& n : v.needs)
      needs.push_back({{"precision", std::string(precision_name(n.precision))},
                       {"weights", n.weights},
                       {"kv_cache", n.kv_cache},
                       {"kv_bytes_per_token", n.kv_bytes_per_token},
                       {"activations", n.activations},
                       {"cuda_context", n.cuda_context},
                       {"total", n.total},
                       {"as_stored", n.as_stored},
                       {"fits_on", n.fits_on}});
    json item = json::object();
    item["path"] = utf8_replaced(m.path);
    item["format"] = std::string(model_format_name(m.format));
    json files = json::array();
    for (const auto& f : m.files) files.push_back(utf8_replaced(f));
    item["files"] = files;
    item["file_bytes"] = m.file_bytes;
    item["weight_bytes"] = m.weight_bytes;
    item["parameters"] = m.parameters_known ? json(m.parameters) : json(nullptr);
    item["dtypes"] = m.dtype_parameters;
    item["stored_dtype"] = m.stored_dtype;
    item["quantization"] = m.quantization;
    item["quantized_bits"] = m.quantized_bits;
    item["kept_16bit_parameters"] = m.kept_16bit;
    item["shape"] = shape_json(m);
    item["vram"] = {{"context", v.context},
                    {"batch", v.batch},
                    {"kv_bytes_per_token", v.kv_bytes_per_token},
                    {"kv_cache_bytes", v.kv_cache_bytes},
                    {"engine", std::string(engine_name(v.engine))},
                    {"engine_note", v.engine_note},
                    {"settings", settings_json(v.serving)},
                    {"precisions", needs}};
    if (const auto b = shown_budget(v)) item["vram"]["serving"] = budget_json(*b);
    json warnings = json::array();
    for (const auto& w : m.warnings) warnings.push_back(utf8_replaced(w));
    item["warnings"] = warnings;
    out.push_back(std::move(item));
  }
  return out;
}

std::vector<ModelReport> models_from_json(const json& list) {
  std::vector<ModelReport> out;
  if (!list.is_array()) return out;
  for (const auto& item : list) {
    ModelReport r;
    Model& m = r.model;
    m.path = item.at("path").get<std::string>();
    m.format = format_named(item.at("format").get<std::string>());
    m.files = item.at("files").get<std::vector<std::string>>();
    m.file_bytes = item.at("file_bytes").get<std::uint64_t>();
    m.weight_bytes = item.at("weight_bytes").get<std::uint64_t>();
    m.parameters_known = !item.at("parameters").is_null();
    m.parameters = m.parameters_known ? item.at("parameters").get<std::uint64_t>() : 0;
    m.dtype_parameters = item.at("dtypes").get<std::map<std::string, std::uint64_t>>();
    m.stored_dtype = item.at("stored_dtype").get<std::string>();
    m.quantization = item.at("quantization").get<std::string>();
    // Absent from reports written before they were kept.
    m.quantized_bits = item.value("quantized_bits", 0u);
    m.kept_16bit = item.value("kept_16bit_parameters", std::uint64_t{0});
    if (const json& s = item.at("shape"); s.is_object()) {
      m.shape_from = s.at("from").get<std::string>();
      m.shape = shape_from_json(s);
    }
    m.warnings = item.at("warnings").get<std::vector<std::string>>();
    const json& v = item.at("vram");
    r.vram.context = v.at("context").get<std::uint64_t>();
    r.vram.batch = v.at("batch").get<std::uint64_t>();
    r.vram.kv_bytes_per_token = v.at("kv_bytes_per_token").get<std::uint64_t>();
    // Reports from before sliding windows: every layer kept the context.
    r.vram.kv_cache_bytes =
        v.value("kv_cache_bytes", r.vram.kv_bytes_per_token * r.vram.context * r.vram.batch);
    // Reports from before engines were read were sized as transformers'.
    r.vram.engine =
        parse_engine(v.value("engine", std::string("transformers"))).value_or(Engine::Transformers);
    r.vram.engine_note = v.value("engine_note", std::string());
    if (const auto s = v.find("settings"); s != v.end()) r.vram.serving = settings_from_json(*s);
    r.vram.take_shape(m.shape);
    for (const auto& n : v.at("precisions")) {
      PrecisionNeed need;
      need.precision =
          parse_precision(n.at("precision").get<std::string>()).value_or(Precision::Stored);
      need.weights = n.at("weights").get<std::uint64_t>();
      need.kv_cache = n.at("kv_cache").get<std::uint64_t>();
      need.kv_bytes_per_token = n.value("kv_bytes_per_token", std::uint64_t{0});
      need.activations = n.at("activations").get<std::uint64_t>();
      need.cuda_context = n.at("cuda_context").get<std::uint64_t>();
      need.total = n.at("total").get<std::uint64_t>();
      need.as_stored = n.value("as_stored", false);
      need.fits_on = n.at("fits_on").get<std::vector<std::string>>();
      r.vram.needs.push_back(std::move(need));
    }
    out.push_back(std::move(r));
  }
  return out;
}

void render_models_text(const std::vector<ModelReport>& models, std::ostream& out) {
  if (models.empty()) return;
  out << "\nMODELS (GPU memory to serve each; the formula and its sources: data/vram.json)\n";
  for (const auto& [m, v] : models) {
    out << "  " << visible(m.path) << "  " << model_format_name(m.format) << ", served by "
        << engine_name(v.engine);
    if (m.files.size() > 1) out << ", " << m.files.size() << " files";
    if (m.parameters_known)
      out << ", " << short_count(m.parameters) << " parameters (" << format_count(m.parameters)
          << "; " << visible(dtype_mix(m)) << ")";
    else
      out << ", parameters not readable";
    out << ", " << format_size(m.weight_bytes) << " of weights\n";
    if (!m.shape_from.empty()) out << "    " << shape_line(m, v) << "\n";
    // The label column as wide as its widest ("stored bitsandbytes 4-bit").
    int width = 16;
    for (const auto& n : v.needs)
      width = std::max(width, static_cast<int>(visible(precision_label(m, n)).size()));
    out << fmt("    %-*s %10s %10s %12s %10s  %s\n", width, "PRECISION", "WEIGHTS", "KV CACHE",
               "ACTIVATIONS", "TOTAL", "FITS ON (one GPU)");
    for (const auto& n : v.needs)
      out << fmt("    %-*s %10s %10s %12s %10s  ", width, visible(precision_label(m, n)).c_str(),
                 format_size(n.weights).c_str(), format_size(n.kv_cache).c_str(),
                 format_size(n.activations).c_str(), format_size(n.total).c_str())
          << fits_text(n) << "\n";
    if (const auto b = shown_budget(v))
      out << "    " << visible(b->breakdown()) << ": " << b->verdict() << "\n";
    if (!v.engine_note.empty()) out << "    note: " << visible(v.engine_note) << "\n";
    for (const auto& w : m.warnings) out << "    warning: " << visible(w) << "\n";
  }
  out << "  TOTAL = weights + KV cache + activations + non-torch memory, per engine (--engine): "
         "vllm counts its profile run's peak (the forward of vllm serve's batched tokens or "
         "the sampler's logits) and its non-torch memory, and a GPU holds it within "
         "--gpu-memory-utilization (0.9) of CUDA's total; llama.cpp its compute buffer and the "
         "CUDA context; transformers 20% of the weights and the CUDA context. int8: 1 byte per "
         "parameter and a 16-bit scale per 128; int4: half a byte and a 16-bit scale and 4-bit "
         "zero-point per 128; embeddings, LM head, norms and biases at 16 bits, as GPTQ, AWQ "
         "and bitsandbytes keep them.\n";
}

void render_models_markdown(const std::vector<ModelReport>& models, std::ostream& out) {
  if (models.empty()) return;
  out << "| model | parameters | precision | weights | KV cache | total | fits on |\n"
         "| --- | ---: | --- | ---: | ---: | ---: | --- |\n";
  for (const auto& [m, v] : models) {
    bool first = true;
    for (const auto& n : v.needs) {
      const std::string name =
          first ? cell(m.path) + " (" + std::string(model_format_name(m.format)) + ")" : "";
      const std::string params =
          first ? (m.parameters_known ? short_count(m.parameters) : "?") : "";
      out << "| " << name << " | " << params << " | " << precision_label(m, n) << " | "
          << format_size(n.weights) << " | " << format_size(n.kv_cache) << " | "
          << format_size(n.total) << " | " << fits_text(n) << " |\n";
      first = false;
    }
  }
  out << "\n";
}

}  // namespace imgsmith::render_detail
