// The serving engines' budgets (src/models/serving.cpp) against the figures
// the engines print at start in published logs. Each case's inputs are the
// log's: its board, its settings, the model's published shape, and the
// weights vLLM says it loaded; what is checked is what imgsmith derives
// from them: the activation peak, the non-torch memory and the KV cache
// left.
#include <catch2/catch.hpp>
#include <cmath>

#include "imgsmith/gate/gate.hpp"
#include "imgsmith/models/vram.hpp"
#include "imgsmith/render/render.hpp"

using namespace imgsmith;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::uint64_t gib(double v) { return static_cast<std::uint64_t>(std::llround(v * kGiB)); }
double in_gib(std::uint64_t bytes) { return static_cast<double>(bytes) / kGiB; }

struct Shape {
  std::uint64_t layers, heads, kv_heads, head_dim, hidden, intermediate, vocab, context;
};

Model safetensors_model(const Shape& s, std::uint64_t weight_bytes) {
  Model m;
  m.format = ModelFormat::Safetensors;
  m.parameters = weight_bytes / 2;
  m.weight_bytes = weight_bytes;
  m.stored_dtype = "BF16";
  m.shape_from = "config.json";
  m.shape.layers = s.layers;
  m.shape.attention_heads = s.heads;
  m.shape.kv_heads = s.kv_heads;
  m.shape.key_dim = m.shape.value_dim = s.head_dim;
  m.shape.hidden_size = s.hidden;
  m.shape.intermediate_size = s.intermediate;
  m.shape.vocab_size = s.vocab;
  m.shape.context_length = s.context;
  return m;
}

// A board as a log gives it: CUDA's total in GiB.
GpuTarget board(double total_gib, unsigned count) {
  Gpu gpu;
  gpu.name = "board of the log";
  gpu.cuda_total_bytes = gib(total_gib);
  gpu.memory_bytes = gpu.cuda_total_bytes;
  return GpuTarget{gpu, count};
}

struct PublishedLog {
  const char* source;
  Shape shape;
  double weights_gib;  // "model weights take"
  unsigned tp;
  double board_gib, utilization;
  std::uint64_t batched_tokens, seqs;
  double activation_gib;   // "PyTorch activation peak memory takes"
  double kv_gib;           // "the rest of the memory reserved for KV Cache"
  bool activation_within;  // whether the activation peak itself is within 10%
  double kv_band = 0.10;   // how far the KV cache left may be from the log's
};

bool within(double ours, double theirs, double band) { return std::abs(ours / theirs - 1) <= band; }

}  // namespace

TEST_CASE("vLLM's budget matches its published start-up logs within 10%: 4 models at TP 1 and 8") {
  // Llama-3-8B (config: 32 layers, 32 heads, 8 KV heads, hidden 4096, MLP
  // 14336, vocabulary 128256). Phi-4 (40 layers, 40 heads, 10 KV heads,
  // hidden 5120, MLP 17920, vocabulary 100352). Qwen2.5-1.5B (28 layers,
  // 12 heads, 2 KV heads, hidden 1536, MLP 8960, vocabulary 151936).
  // DeepSeek-Coder-V2-Lite (27 layers, MLA: one latent of 512 + 64, hidden
  // 2048, 6 experts of 1408 a token, vocabulary 102400).
  const Shape llama3_8b{32, 32, 8, 128, 4096, 14336, 128256, 8192};
  const Shape phi4{40, 40, 10, 128, 5120, 17920, 100352, 16384};
  const Shape qwen25_1_5b{28, 12, 2, 128, 1536, 8960, 151936, 32768};
  const PublishedLog logs[] = {
      // vllm-project/vllm PR #10511 (vllm serve meta-llama/Meta-Llama-3-8B,
      // V0: max_num_batched_tokens = max(max_model_len 8192, 2048)).
      {"#10511 Llama-3-8B TP1", llama3_8b, 14.96, 1, 79.22, 0.90, 8192, 256, 1.26, 53.29, true},
      // Phi-4 GPTQ 4-bit (kaitchup/Phi-4-AutoRound-GPTQ-4bit) at
      // --max-model-len 2048 --gpu-memory-utilization 0.15 (xinyuwei-david/
      // david-share, Deep-Learning/Phi4): 715 blocks.
      {"Phi-4 GPTQ TP1",
       {phi4.layers, phi4.heads, phi4.kv_heads, phi4.head_dim, phi4.hidden, phi4.intermediate,
        phi4.vocab, 2048},
       8.51,
       1,
       79.25,
       0.15,
       2048,
       256,
       0.94,
       2.18,
       true},
      // Qwen/Qwen2.5-1.5B-Instruct on a Turing board at 0.5, max_model_len
      // 32768 without chunked prefill: 5517 blocks.
      // Its non-torch memory is 0.01 GiB where 0.35 is counted: the KV
      // cache left is 10.3% smaller than the log's, on the side of "does
      // not fit".
      {"Qwen2.5-1.5B TP1", qwen25_1_5b, 2.89, 1, 14.56, 0.50, 32768, 256, 2.02, 2.36, true, 0.11},
      // DeepSeek-Coder-V2-Lite-Instruct on 8x A100 40GB, vLLM 0.7.1,
      // max_seq_len 8192, VLLM_MAX_NUM_SEQS 16 (AWS SageMaker LMI sample).
      // Its activation peak (0.36 GiB) is more than the MLP-and-sampler
      // model's 0.14: MLA's up-projections are not in the formula.
      {"DeepSeek-Coder-V2-Lite TP8",
       {27, 16, 1, 288, 2048, 1408 * 6, 102400, 8192},
       3.97,
       8,
       39.39,
       0.90,
       8192,
       16,
       0.36,
       29.02,
       false},
  };
  for (const PublishedLog& log : logs) {
    INFO(log.source);
    VramSettings settings;
    settings.serving.engine = Engine::Vllm;
    settings.serving.gpu_memory_utilization = log.utilization;
    settings.serving.max_num_batched_tokens = log.batched_tokens;
    settings.serving.max_num_seqs = log.seqs;
    // The log's weights are per GPU; the model holds them all.
    const Model m = safetensors_model(log.shape, gib(log.weights_gib) * log.tp);
    const VramEstimate v = estimate_vram(m, settings);
    const ServingBudget b = serving_budget(v, Precision::Stored, board(log.board_gib, log.tp));
    INFO("activation " << in_gib(b.activation_peak) << " GiB, KV " << in_gib(b.kv_available)
                       << " GiB");
    CHECK(within(in_gib(b.usable), log.board_gib * log.utilization, 0.001));
    CHECK(within(in_gib(b.weights), log.weights_gib, 0.001));
    if (log.activation_within) CHECK(within(in_gib(b.activation_peak), log.activation_gib, 0.10));
    CHECK(within(in_gib(b.kv_available), log.kv_gib, log.kv_band));
    if (log.kv_band > 0.10) CHECK(in_gib(b.kv_available) < log.kv_gib);
  }
}

TEST_CASE("vLLM at TP2: PR #10511's per-GPU weights and non-torch memory and activation peak") {
  // vllm serve meta-llama/Meta-Llama-3-8B -tp 2: model weights take
  // 7.48GiB; non_torch_memory 3.58GiB; PyTorch activation peak memory
  // 1.26GiB, per GPU. The weights are the published 8,030,261,248
  // parameters at 2 bytes, split two ways.
  Model m = safetensors_model({32, 32, 8, 128, 4096, 14336, 128256, 8192}, 2 * 8'030'261'248ull);
  VramSettings settings;
  settings.serving.max_num_batched_tokens = 8192;
  settings.serving.max_num_seqs = 256;
  const VramEstimate v = estimate_vram(m, settings);
  CHECK(v.engine == Engine::Vllm);
  const ServingBudget b = serving_budget(v, Precision::Stored, board(79.22, 2));
  CHECK(within(in_gib(b.weights), 7.48, 0.01));
  CHECK(within(in_gib(b.non_torch), 3.58, 0.01));
  CHECK(within(in_gib(b.activation_peak), 1.26, 0.10));
  // The sampler's logits, not the forward, set the peak at both TP sizes,
  // as the log's equal figures say.
  CHECK(b.activation_peak == 256ull * 128256 * 41);
  // KV cache: 128 KiB a token, split by the 8 KV heads two ways; what is
  // left is the log's 71.29 GiB less the three figures above.
  CHECK(b.kv_bytes_per_token == 65'536);
  CHECK(within(in_gib(b.kv_available), 71.29 - 7.48 - 3.58 - 1.26, 0.01));
  CHECK(b.kv_tokens % 16 == 0);
  CHECK(b.kv_tokens == (b.kv_available / 65'536) / 16 * 16);
  CHECK(b.fits);
  CHECK(b.verdict().find("fits: room for " + std::string()) == 0);
}

TEST_CASE(
    "vLLM past as many GPUs as KV heads keeps a whole head on each: MLA's latent everywhere") {
  // DeepSeek-V2-Lite's one latent (27 x 576 x 2 B = 31,104 B a token) is
  // on every GPU at TP8; Llama-3-8B's 8 KV heads split 8 ways and no more.
  Model mla = safetensors_model({27, 16, 1, 288, 2048, 8448, 102400, 8192}, 31'400'000'000);
  const VramEstimate v = estimate_vram(mla, {});
  CHECK(v.kv_bytes_per_token == 31'104);
  CHECK(serving_budget(v, Precision::Stored, board(39.39, 8)).kv_bytes_per_token == 31'104);
  Model gqa = safetensors_model({32, 32, 8, 128, 4096, 14336, 128256, 8192}, 16'060'522'496);
  const VramEstimate g = estimate_vram(gqa, {});
  CHECK(serving_budget(g, Precision::Stored, board(79.22, 8)).kv_bytes_per_token == 131'072 / 8);
  CHECK(serving_budget(g, Precision::Stored, board(79.22, 16)).kv_bytes_per_token == 131'072 / 8);
}

TEST_CASE("near the boundary: does not fit under vLLM's default 0.9 but fits with 0.94") {
  // Llama-3-8B at bf16 on an L40S (44.31 GiB to CUDA, vllm-project/vllm
  // #15196) with a batch whose KV cache takes it past 0.9 of the board but
  // not past 0.95: 14.96 GiB of weights, 1.25 GiB of sampler, 0.35 GiB of
  // non-torch memory, and 25 sequences of 8,192 tokens at 1 GiB each:
  // 41.56 GiB, 0.938 of the board.
  Model m = safetensors_model({32, 32, 8, 128, 4096, 14336, 128256, 8192}, 16'060'522'496);
  VramSettings settings;
  settings.batch = 25;
  Gpu l40s;
  for (const Gpu& g : known_gpus())
    if (g.name == "L40S") l40s = g;
  REQUIRE(l40s.cuda_total_bytes == gib(44.31));
  const VramEstimate v = estimate_vram(m, settings);
  const ServingBudget b = serving_budget(v, Precision::Stored, GpuTarget{l40s, 1});
  CHECK_FALSE(b.fits);
  REQUIRE(b.fits_at_utilization);
  CHECK(*b.fits_at_utilization == Approx(0.94));
  CHECK(b.verdict().find("does not fit under vLLM's default 0.90; fits with "
                         "--gpu-memory-utilization 0.94") == 0);
  // At that share it fits, and says how much room is left.
  settings.serving.gpu_memory_utilization = 0.94;
  const ServingBudget at =
      serving_budget(estimate_vram(m, settings), Precision::Stored, GpuTarget{l40s, 1});
  CHECK(at.fits);
  CHECK(at.sequences == 25);
  // A batch past 0.95 is told what it needs and has, not a share.
  settings = VramSettings{};
  settings.batch = 40;
  const ServingBudget over =
      serving_budget(estimate_vram(m, settings), Precision::Stored, GpuTarget{l40s, 1});
  CHECK_FALSE(over.fits_at_utilization);
  CHECK(over.verdict().find("does not fit: needs ") == 0);
  CHECK(over.verdict().find(", has 39.88 GiB") != std::string::npos);
  // The --fits gate says the same.
  GateConfig gate;
  gate.fits = GpuTarget{l40s, 1};
  settings = VramSettings{};
  settings.batch = 25;
  const std::vector<ModelReport> reports{{m, estimate_vram(m, settings)}};
  const GateResult r = evaluate_gate(Analysis{}, gate, nullptr, nullptr, &reports);
  REQUIRE(r.checks.size() == 1);
  CHECK_FALSE(r.checks[0].passed);
  CHECK(r.checks[0].message.find("fits with --gpu-memory-utilization 0.94") != std::string::npos);
}

TEST_CASE("vllm serve's batch defaults follow the board: 70 GiB and not an A100 take the larger") {
  Model m = safetensors_model({32, 32, 8, 128, 4096, 14336, 128256, 8192}, 16'060'522'496);
  const VramEstimate v = estimate_vram(m, {});
  Gpu h100, a100, l4;
  for (const Gpu& g : known_gpus()) {
    if (g.name == "H100") h100 = g;
    if (g.name == "A100-80GB") a100 = g;
    if (g.name == "L4") l4 = g;
  }
  const ServingBudget on_h100 = serving_budget(v, Precision::Stored, GpuTarget{h100, 1});
  CHECK(on_h100.max_num_batched_tokens == 8192);
  CHECK(on_h100.max_num_seqs == 1024);
  CHECK(on_h100.activation_peak == 1024ull * 128256 * 41);
  const ServingBudget on_a100 = serving_budget(v, Precision::Stored, GpuTarget{a100, 1});
  CHECK(on_a100.max_num_seqs == 256);
  CHECK(serving_budget(v, Precision::Stored, GpuTarget{l4, 1}).max_num_batched_tokens == 2048);
  // The board's total is CUDA's where a log gave it, else the data sheet's.
  CHECK(on_h100.board_measured);
  CHECK(on_h100.board == gib(79.22));
  CHECK_FALSE(on_a100.board_measured);
  // 98% of 80 GB: below any CUDA total logged for a board of its data sheet.
  CHECK(on_a100.board == static_cast<std::uint64_t>(80e9 * 0.98));
  CHECK(on_a100.breakdown().find("(98% of the data sheet's)") != std::string::npos);
}

TEST_CASE("vLLM's fp8 KV cache (--kv-dtype fp8) is half the bytes and twice the tokens") {
  Model m = safetensors_model({32, 32, 8, 128, 4096, 14336, 128256, 8192}, 16'060'522'496);
  VramSettings fp8;
  fp8.serving.kv_fp8 = true;
  const VramEstimate half = estimate_vram(m, fp8);
  const VramEstimate full = estimate_vram(m, {});
  CHECK(half.at(Precision::Stored)->kv_cache * 2 == full.at(Precision::Stored)->kv_cache);
  CHECK(half.at(Precision::Stored)->kv_bytes_per_token == 65'536);
  const GpuTarget h100 = board(79.22, 1);
  const ServingBudget a = serving_budget(half, Precision::Stored, h100);
  const ServingBudget b = serving_budget(full, Precision::Stored, h100);
  CHECK(a.kv_tokens / 16 == (b.kv_available / 65'536) / 16);
  // llama.cpp (a GGUF file's engine) has no fp8 cache: said, not applied.
  m.format = ModelFormat::Gguf;
  const VramEstimate gguf = estimate_vram(m, fp8);
  CHECK(gguf.engine == Engine::LlamaCpp);
  CHECK(gguf.at(Precision::Stored)->kv_cache == full.at(Precision::Stored)->kv_cache);
  CHECK(gguf.engine_note.find(
            "--kv-dtype fp8, --gpu-memory-utilization and --max-num-* are vLLM's") !=
        std::string::npos);
}

TEST_CASE("llama.cpp: f16 KV cache whole and the compute buffer of its published log") {
  // llama.cpp docs/backend/CANN.md, Meta-Llama-3-8B-Instruct F16 at n_ctx
  // 8192: KV self size = 1024.00 MiB; compute buffer size = 1260.50 MiB.
  Model m = safetensors_model({32, 32, 8, 128, 4096, 14336, 128256, 8192}, 16'060'522'496);
  m.format = ModelFormat::Gguf;
  const VramEstimate v = estimate_vram(m, {});
  CHECK(v.engine == Engine::LlamaCpp);
  const PrecisionNeed& n = *v.at(Precision::Stored);
  CHECK(n.kv_cache == 1024ull << 20);
  CHECK(within(static_cast<double>(n.activations) / (1 << 20), 1260.50, 0.02));
  // The whole board, no share.
  const ServingBudget b = serving_budget(v, Precision::Stored, board(22.0, 1));
  CHECK(b.utilization == 1.0);
  CHECK(b.usable == gib(22.0));
}

TEST_CASE("vLLM without the MLP's width says its activation peak is a share of the weights") {
  Model m = safetensors_model({32, 32, 8, 128, 4096, 0, 128256, 8192}, 16'060'522'496);
  const VramEstimate v = estimate_vram(m, {});
  CHECK(v.engine_note.find("intermediate_size") != std::string::npos);
  CHECK(v.at(Precision::Stored)->activations ==
        static_cast<std::uint64_t>(std::ceil(16'060'522'496.0 * 0.2)));
}

TEST_CASE("a JSON report read back budgets as the one written: settings and engine kept") {
  Model m = safetensors_model({32, 32, 8, 128, 4096, 14336, 128256, 8192}, 16'060'522'496);
  VramSettings settings;
  settings.serving.gpu_memory_utilization = 0.5;
  settings.serving.max_num_seqs = 1024;
  settings.serving.kv_fp8 = true;
  const std::vector<ModelReport> models{{m, estimate_vram(m, settings)}};
  const Analysis analysis;
  const GateResult gate;
  const Report report{analysis, nullptr, nullptr, gate, nullptr, &models};
  const nlohmann::json written = report_to_json(report);
  const SavedReport saved = report_from_json(written);
  REQUIRE(saved.models.size() == 1);
  const VramEstimate& back = saved.models[0].vram;
  CHECK(back.engine == Engine::Vllm);
  CHECK(back.serving.gpu_memory_utilization == 0.5);
  CHECK(back.serving.max_num_seqs == 1024u);
  CHECK(back.serving.kv_fp8);
  const nlohmann::json serving = written.at("models")[0].at("vram").at("serving");
  CHECK(serving.at("utilization") == 0.5);
  const Report again{analysis, nullptr, nullptr, gate, nullptr, &saved.models};
  CHECK(report_to_json(again).at("models") == written.at("models"));
}
