// The models of an image or a project, and the GPU memory each needs to be
// served: weights at each precision, the KV cache for a context, the
// activations and the CUDA context; which GPUs of data/gpus.json it fits.
// Every constant comes from data/vram.json, which names its sources.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "imgsmith/models/model_file.hpp"
#include "imgsmith/models/serving.hpp"

namespace imgsmith {

// What config.json beside the weights says (Hugging Face transformers).
struct HfConfig {
  ModelShape shape;
  std::string model_type;     // the language model's (text_config's, for a multimodal one)
  bool encoder_only = false;  // BERT-like: no KV cache when served
  // The fields config.json left out, taken from model_type's defaults
  // (data/model-configs.json): "layers, heads"; "" none.
  std::string defaulted;
  std::vector<std::string> warnings;  // a model_type without a table row, say
  std::string attention_note;         // how the KV cache differs: MLA, an encoder
  std::string torch_dtype;            // "bfloat16", "float16", "float32"
  std::string quant_method;           // "gptq", "awq", "bitsandbytes", ...
  unsigned quant_bits = 0;
};
// Reads a config.json; nullopt when it is not one of a transformers model.
std::optional<HfConfig> read_hf_config(std::string_view text);

// One model: a weights file, or the files of one format in one directory
// (a sharded checkpoint).
struct Model {
  std::string path;  // the file, or the directory of a model in several files
  ModelFormat format = ModelFormat::None;
  std::vector<std::string> files;
  std::uint64_t file_bytes = 0;
  std::uint64_t weight_bytes = 0;
  std::uint64_t parameters = 0;
  bool parameters_known = true;
  std::map<std::string, std::uint64_t> dtype_parameters;
  std::string stored_dtype;  // the dtype most parameters have
  ModelShape shape;
  std::string shape_from;    // "gguf", "config.json", "" (unknown)
  std::string quantization;  // "gptq 4-bit", "awq 4-bit", "bitsandbytes 8-bit", ""
  // The bits of the weights as stored when the checkpoint is quantized
  // (GPTQ/AWQ/bitsandbytes 4 or 8, FP8 8, GGUF Q4_K 4); 0 when it is not.
  unsigned quantized_bits = 0;
  // Parameters a quantizer keeps at 16 bits (kept_at_16_bits): the int8 and
  // int4 rows count them at 2 bytes.
  std::uint64_t kept_16bit = 0;
  std::vector<std::string> warnings;
};

struct ModelFileAt {
  std::string path;
  ModelFile file;
};
struct TextFileAt {
  std::string path;
  std::string text;
};
// Groups model files into models and gives each the config.json of its
// directory, if any. Largest first.
std::vector<Model> collect_models(const std::vector<ModelFileAt>& files,
                                  const std::vector<TextFileAt>& configs);

// ----- Hugging Face hub caches (hf_cache.cpp) -----
// .../models--ORG--NAME/snapshots/<rev>/<name> are symlinks to
// ../../blobs/<sha>, and refs/main names the revision `main` is.

// A symbolic link and its target, as stored.
struct LinkAt {
  std::string path;
  std::string target;
};
// Model files and configs as a checkpoint's folder shows them, and warnings
// for the models under a path (the cache's folder).
struct ModelInputs {
  std::vector<ModelFileAt> files;
  std::vector<TextFileAt> configs;
  std::vector<std::pair<std::string, std::string>> warnings;  // path prefix, warning
};
// The caches' blobs under the snapshot names that point to them: the
// snapshot refs/main names where there is one (other revisions are a
// warning), else every snapshot; a blob no counted snapshot names is left
// out. Files and texts outside caches pass through; `texts` may hold any
// captured small files (configs, refs/main, the caches' small blobs).
ModelInputs resolve_hf_caches(std::vector<ModelFileAt> files, std::vector<TextFileAt> texts,
                              const std::vector<LinkAt>& links);
// collect_models, with the warnings of resolve_hf_caches given to the
// models under their paths.
std::vector<Model> collect_models(ModelInputs inputs);
// Which links a scan keeps for resolve_hf_caches (a cache's snapshots), and
// which small files it keeps whole (a cache's blobs up to
// kHfCacheTextBytes, its refs).
inline constexpr std::uint64_t kHfCacheTextBytes = 1 << 20;
bool hf_cache_link(std::string_view path);
bool hf_cache_text(std::string_view path, std::uint64_t size);

// The files a model inventory needs kept whole (config.json beside weights)
// or sniffed although small (ONNX graphs whose weights are external):
// bytes to keep from the front, as a layer scan's capture function says it.
std::uint64_t model_capture(std::string_view path, std::uint64_t size);

enum class Precision : std::uint8_t { Stored, Bf16, Int8, Int4 };
std::string_view precision_name(Precision precision);
// "stored", "bf16", "fp16" (the same bytes), "int8", "int4".
std::optional<Precision> parse_precision(std::string_view text);

struct VramSettings {
  std::optional<std::uint64_t> context;  // tokens; unset: the model's maximum
  std::uint64_t batch = 1;
  ServingSettings serving;
};

// The engine a model is served with when nobody says: GGUF llama.cpp;
// safetensors (a Hugging Face checkpoint) vLLM; a PyTorch pickle or ONNX
// graph transformers.
Engine engine_for(const Model& model);

// One precision's need on one GPU, as the estimate's engine budgets it.
struct PrecisionNeed {
  Precision precision = Precision::Stored;
  std::uint64_t weights = 0;             // as the engine loads them (vLLM: float32 at 16 bits)
  std::uint64_t kv_cache = 0;            // context x batch, at the engine's KV dtype
  std::uint64_t kv_bytes_per_token = 0;  // every layer, at that dtype
  // vLLM: the profile run's peak (forward of the batched tokens, or the
  // sampler's logits); llama.cpp: its compute buffer; transformers: a
  // share of the weights.
  std::uint64_t activations = 0;
  std::uint64_t cuda_context = 0;  // vLLM: its non-torch memory; others the CUDA context
  std::uint64_t total = 0;         // on one GPU
  // An int8/int4 row of a checkpoint already quantized to as few bits or
  // fewer: the stored weights, not an option to advise.
  bool as_stored = false;
  // GPUs of the table it fits on alone, smallest first: the total within
  // the share of the board the engine takes (vLLM: its
  // gpu_memory_utilization of CUDA's total).
  std::vector<std::string> fits_on;
};

struct VramEstimate {
  std::uint64_t context = 0;  // tokens the KV cache is sized for (0: no KV cache known)
  std::uint64_t batch = 1;
  std::uint64_t kv_bytes_per_token = 0;  // at 2 bytes per element, every layer
  // The KV cache at `context` x `batch`, 2 bytes per element: less than
  // kv_bytes_per_token x context where layers slide over a window.
  std::uint64_t kv_cache_bytes = 0;
  std::vector<PrecisionNeed> needs;  // stored, bf16, int8, int4; only stored when
                                     // the parameters are not known
  Engine engine = Engine::Transformers;
  ServingSettings serving;  // as asked; engine is the one used
  // How the engine's figures were reached where the model did not say
  // (an activation peak without the MLP's width, say); "" none.
  std::string engine_note;
  // The need per GPU on `gpus` of them (tensor parallel), with the
  // engine's defaults for a board under 70 GiB: the weights and KV cache
  // split; vLLM's forward activations split in part and its non-torch
  // memory grows (NCCL); each GPU holds its own CUDA context.
  std::uint64_t per_gpu(const PrecisionNeed& need, unsigned gpus) const;
  const PrecisionNeed* at(Precision precision) const;

  // The figures the engine's budget needs that the needs do not carry.
  std::uint64_t hidden_size = 0, intermediate_size = 0, vocab_size = 0, attention_heads = 0;
  // Tensor parallelism splits the KV cache by heads: past as many GPUs as
  // KV heads each GPU keeps a whole head (MLA's one latent on every GPU).
  std::uint64_t kv_heads = 0;
  std::uint64_t kv_split(std::uint64_t bytes, unsigned gpus) const;
  // Takes the figures above from the model's shape (the estimate, and a
  // report read back).
  void take_shape(const ModelShape& shape);
  bool activations_from_shape = false;  // else a share of the weights
};
VramEstimate estimate_vram(const Model& model, const VramSettings& settings);

struct Gpu;
struct GpuTarget;

// A model served on a target of one or more GPUs, in the figures vLLM's
// start-up log prints: what the board gives, what the weights, non-torch
// memory and activation peak take, and what is left for the KV cache.
struct ServingBudget {
  Engine engine = Engine::Vllm;
  std::string gpu;  // "H100x2"
  unsigned gpus = 1;
  std::uint64_t board = 0;                                     // one GPU's total to CUDA
  bool board_measured = false;                                 // false: the data sheet's figure
  double utilization = 1;                                      // the share of it the engine takes
  std::uint64_t usable = 0;                                    // board x utilization
  std::uint64_t max_num_batched_tokens = 0, max_num_seqs = 0;  // vLLM's, as used
  // Per GPU:
  std::uint64_t weights = 0, non_torch = 0, activation_peak = 0;
  std::uint64_t kv_bytes_per_token = 0;
  std::uint64_t kv_needed = 0;     // batch sequences at the context
  std::uint64_t kv_available = 0;  // usable - the rest; 0 when they overrun it
  std::uint64_t need = 0;          // weights + non-torch + activations + kv_needed
  std::uint64_t kv_tokens = 0;     // what kv_available holds (vLLM: whole blocks)
  std::uint64_t sequences = 0;     // of `context` tokens
  std::uint64_t context = 0, batch = 1;
  bool fits = false;
  // vLLM, not fitting: the least --gpu-memory-utilization it fits at, when
  // that is at most the largest data/vram.json suggests.
  std::optional<double> fits_at_utilization;

  // "fits: room for N tokens of KV cache (M sequences at C)"; "does not
  // fit: needs X, has Y"; and the utilization that would.
  std::string verdict() const;
  // The figures as vLLM's start-up log gives them.
  std::string breakdown() const;
};
// What a board must have free at start for `need` under the estimate's
// engine: the need over vLLM's gpu_memory_utilization, else the need
// (gen's IMGSMITH_MODEL_VRAM, the probe's check).
std::uint64_t board_free_needed(const VramEstimate& estimate, std::uint64_t need);

// The budget of `model` at `precision` (which must be among the
// estimate's needs) on `target`, with the estimate's engine and settings.
ServingBudget serving_budget(const VramEstimate& estimate, Precision precision,
                             const GpuTarget& target);

struct ModelReport {
  Model model;
  VramEstimate vram;
};

struct Gpu {
  std::string name;
  std::uint64_t memory_bytes = 0;  // the data sheet's
  // Its total to CUDA (cudaMemGetInfo), as a published log shows it;
  // 0 where none was found (the data sheet's figure is used, and said).
  std::uint64_t cuda_total_bytes = 0;
  // major * 10 + minor: 90 for 9.0, 103 for 10.3 (the GPU code it runs).
  unsigned compute_capability = 0;
};
// data/gpus.json, smallest memory first.
const std::vector<Gpu>& known_gpus();
// A board's total as a budget counts it: CUDA's where a log gave it, else
// data/gpus.json's share of the data sheet's (below every CUDA total
// logged for a board of that data sheet).
std::uint64_t budget_board_bytes(const Gpu& gpu);
// "L4 and larger" when every GPU of the table from the first it fits on
// holds it too, else the names ("A100-80GB, H100-NVL, GH200 and 3 more");
// "" when none.
std::string fits_on_text(const std::vector<std::string>& fits_on);
struct GpuTarget {
  Gpu gpu;
  unsigned count = 1;
  std::string text() const;  // "A100-80GBx2"
};
// "L4", "a100-80gb", "H100x8". Throws InputError naming the known GPUs.
GpuTarget parse_gpu_target(std::string_view text);
// GPUs as --gpu names them (analyze's gate, gen's targets): each item a
// comma-separated list ("H100,b200"), case-insensitive, each GPU once, in
// the order given. Throws InputError naming the known GPUs.
std::vector<Gpu> parse_gpu_list(const std::vector<std::string>& items);

// What data/vram.json says of the estimate, for reports to state beside it.
std::string vram_assumptions();
// Python packages (PEP 503 names) that serve a float32 checkpoint at 16
// bits by default (data/vram.json).
const std::vector<std::string>& engines_serving_float32_at_16_bits();
// Whether most of the model's parameters are float32.
bool stored_as_float32(const Model& model);

}  // namespace imgsmith
