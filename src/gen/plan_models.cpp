// The project's models: the largest one's GPU memory need goes into the
// image as IMGSMITH_MODEL_VRAM, which the probe compares with the GPU's
// free memory at start, before the first request runs out of it.
#include <algorithm>
#include <cmath>

#include "imgsmith/util/size.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {

namespace {

// The engine the project serves its models with, and the requirement that
// says so: vllm's budget for vllm, llama.cpp's for llama-cpp-python, else
// transformers' (no preallocation).
std::pair<Engine, const Requirement*> serving_engine(const Project& project) {
  if (project.python)
    for (const auto& r : project.python->requirements) {
      if (r.name == "vllm") return {Engine::Vllm, &r};
      if (r.name == "llama-cpp-python") return {Engine::LlamaCpp, &r};
    }
  return {Engine::Transformers, nullptr};
}

}  // namespace

void Decider::models() {
  const auto [engine, engine_requirement] = serving_engine(project_);
  plan_.models = project_.models;
  // Sized as the project's engine will serve them.
  for (auto& report : plan_.models) {
    VramSettings settings;
    settings.serving.engine = engine;
    report.vram = estimate_vram(report.model, settings);
  }
  const ModelReport* largest = nullptr;
  for (const auto& report : plan_.models)
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
  // vLLM takes its gpu_memory_utilization of the board and must fit in it:
  // the board needs the need divided by that share free at start.
  const auto on_board = [&](std::uint64_t total) {
    return board_free_needed(largest->vram, total);
  };
  plan_.model_vram = on_board(row->total);
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
                      ":" + std::to_string(on_board(n.total));
  if (!by_precision.empty())
    plan_.env.push_back("IMGSMITH_MODEL_VRAM_BY_PRECISION=" + by_precision);
  // Each token of context costs this much KV cache: the probe turns what is
  // left free into tokens.
  if (largest->vram.kv_bytes_per_token > 0)
    plan_.env.push_back("IMGSMITH_MODEL_KV_BYTES_PER_TOKEN=" +
                        std::to_string(largest->vram.kv_bytes_per_token));
  const std::string budget =
      engine == Engine::Vllm
          ? "vLLM's budget, as " + engine_requirement->name + " (" + engine_requirement->source +
                ") serves it: weights, KV cache at its maximum context, its profile run's "
                "activation peak and non-torch memory, over its gpu_memory_utilization of the "
                "board"
      : engine == Engine::LlamaCpp
          ? "llama.cpp's budget, as " + engine_requirement->name + " (" +
                engine_requirement->source +
                ") serves it: weights, f16 KV cache at its maximum context, compute buffer, CUDA "
                "context"
          : std::string(
                "weights, KV cache at its maximum context, activations, CUDA context; "
                "no serving engine (vllm, llama-cpp-python) among the requirements");
  decide(largest->model.path, "the largest model needs " + need + " of GPU memory " + at + " (" +
                                  budget +
                                  "): IMGSMITH_MODEL_VRAM, which the probe checks at start");
}

}  // namespace imgsmith::gen
