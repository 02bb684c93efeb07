// The engine costs estimate_vram and the serving budget share
// (serving.cpp, from data/vram.json's "engines").
#pragma once

#include <cstdint>
#include <initializer_list>

#include "imgsmith/models/vram.hpp"

namespace imgsmith::models_detail {

// Sizes that cannot be told saturate at UINT64_MAX: no GPU holds them,
// where a wrapped sum would look small and pass a gate.
inline std::uint64_t saturating_product(std::initializer_list<std::uint64_t> factors) {
  std::uint64_t out = 1;
  for (const std::uint64_t f : factors)
    if (__builtin_mul_overflow(out, f, &out)) return UINT64_MAX;
  return out;
}

inline std::uint64_t saturating_sum(std::initializer_list<std::uint64_t> terms) {
  std::uint64_t out = 0;
  for (const std::uint64_t t : terms)
    if (__builtin_add_overflow(out, t, &out)) return UINT64_MAX;
  return out;
}

// Bytes per KV element at the estimate's engine and settings: 1 for vLLM's
// fp8 cache, else 2.
std::uint64_t kv_bytes_per_element(const VramEstimate& estimate);
// Memory outside the weights, activations and KV cache on each of `gpus`:
// vLLM's non-torch memory, else the CUDA context.
std::uint64_t non_torch(const VramEstimate& estimate, unsigned gpus);
// The engine's activation peak on each of `gpus` for `weights` of weights:
// vLLM's profile run of `batched_tokens` over `seqs` sequences,
// llama.cpp's compute buffer for `kv_tokens` of context, else a share of
// the weights.
std::uint64_t activation_peak(const VramEstimate& estimate, std::uint64_t weights, unsigned gpus,
                              std::uint64_t batched_tokens, std::uint64_t seqs,
                              std::uint64_t kv_tokens);
// `vllm serve`'s batch on a board under 70 GiB, or as the settings say.
std::uint64_t small_board_batched_tokens(const ServingSettings& settings);
std::uint64_t small_board_seqs(const ServingSettings& settings);

}  // namespace imgsmith::models_detail
