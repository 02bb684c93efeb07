// The project's models: the largest one's GPU memory need goes into the
// image as IMGSMITH_MODEL_VRAM, which the probe compares with the GPU's
// free memory at start, before the first request runs out of it.
#include <algorithm>

#include "imgsmith/util/size.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {

void Decider::models() {
  plan_.models = project_.models;
  const ModelReport* largest = nullptr;
  for (const auto& report : project_.models)
    if (!report.vram.needs.empty() &&
        (largest == nullptr || report.vram.needs.front().total > largest->vram.needs.front().total))
      largest = &report;
  if (largest == nullptr) return;
  // The precision the project will load it at: as stored, but a float32
  // checkpoint at 16 bits where an engine that does so by default serves it.
  const PrecisionNeed* row = &largest->vram.needs.front();
  std::string at = "at its stored precision";
  if (stored_as_float32(largest->model) && project_.python)
    for (const auto& r : project_.python->requirements)
      if (contains(engines_serving_float32_at_16_bits(), r.name))
        if (const PrecisionNeed* half = largest->vram.at(Precision::Bf16)) {
          row = half;
          at = "at 16 bits, as " + r.name + " (" + r.source +
               ") loads a float32 checkpoint with its default --dtype auto";
          break;
        }
  plan_.model_vram = row->total;
  const std::string need = format_size(plan_.model_vram);
  if (!plan_.gpu) {
    plan_.notes.push_back("the project holds model weights (" + largest->model.path + ", " + need +
                          " on a GPU) but nothing in it uses a GPU: the image runs it on the CPU");
    return;
  }
  plan_.env.push_back("IMGSMITH_MODEL_VRAM=" + std::to_string(plan_.model_vram));
  // What the lower precisions would need, for the probe's advice when the
  // stored one does not fit (not those the checkpoint already is).
  std::string by_precision;
  for (const auto& n : largest->vram.needs)
    if (n.precision != Precision::Stored && !n.as_stored)
      by_precision += (by_precision.empty() ? "" : ",") + std::string(precision_name(n.precision)) +
                      ":" + std::to_string(n.total);
  if (!by_precision.empty())
    plan_.env.push_back("IMGSMITH_MODEL_VRAM_BY_PRECISION=" + by_precision);
  // Each token of context costs this much KV cache: the probe turns what is
  // left free into tokens.
  if (largest->vram.kv_bytes_per_token > 0)
    plan_.env.push_back("IMGSMITH_MODEL_KV_BYTES_PER_TOKEN=" +
                        std::to_string(largest->vram.kv_bytes_per_token));
  decide(largest->model.path,
         "the largest model needs " + need + " of GPU memory " + at +
             " (weights, KV cache at its maximum context, "
             "activations, CUDA context): IMGSMITH_MODEL_VRAM, which the probe checks at start");
}

}  // namespace imgsmith::gen
