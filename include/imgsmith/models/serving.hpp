// Which engine serves a model, and the settings of its memory budget: vLLM
// preallocates a share of the board and profiles a batch; llama.cpp
// allocates its KV cache whole beside a compute buffer; transformers
// allocates as it goes. data/vram.json's "engines" holds each constant and
// where it was read.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace imgsmith {

enum class Engine : std::uint8_t { Vllm, LlamaCpp, Transformers };
// "vllm", "llama.cpp", "transformers".
std::string_view engine_name(Engine engine);
// The names engine_name gives, any case, and "llamacpp", "llama-cpp".
std::optional<Engine> parse_engine(std::string_view text);

struct ServingSettings {
  std::optional<Engine> engine;  // unset: the model's format decides (engine_for)
  // vLLM's --gpu-memory-utilization; unset: its default (data/vram.json).
  std::optional<double> gpu_memory_utilization;
  // vLLM's --kv-cache-dtype fp8: one byte per element instead of two.
  bool kv_fp8 = false;
  // vLLM's --max-num-batched-tokens and --max-num-seqs; unset: `vllm
  // serve`'s defaults for the board.
  std::optional<std::uint64_t> max_num_batched_tokens;
  std::optional<std::uint64_t> max_num_seqs;
};

}  // namespace imgsmith
