// Model files judged by their content, never by their name: a `.bin` can be
// PyTorch weights or firmware, and a checkpoint can be called anything.
#pragma once

#include <cstdint>
#include <string_view>

namespace imgsmith {

enum class ModelFormat : std::uint8_t {
  None,
  Safetensors,  // 8-byte little-endian header length, then a JSON object
  PyTorch,      // torch.save's zip (ENTRY/data.pkl), or the legacy pickle with torch's magic number
  Gguf,         // llama.cpp's "GGUF" magic
  Onnx,         // an ONNX ModelProto (protobuf: ir_version first, then a known field)
  Keras,  // HDF5 with Keras's attributes (.h5), or Keras 3's zip (config.json, model.weights.h5)
  // "\x93NUMPY" arrays (.npy): data as often as weights; attribution counts
  // one as a model only beside a model's config.json.
  Numpy,
};

// Files smaller than this are never model weights worth a look (an ONNX
// graph with external data is the exception: model_capture).
inline constexpr std::uint64_t kModelMinBytes = 1'000'000;

// How many leading bytes sniff_model_format needs to decide.
inline constexpr std::uint64_t kModelHeadBytes = 4096;

// The format of a file from its first bytes (at most kModelHeadBytes of them).
ModelFormat sniff_model_format(std::string_view head);

// "safetensors", "pytorch", "gguf", "onnx", "keras", "numpy"; "" for None.
std::string_view model_format_name(ModelFormat format);

}  // namespace imgsmith
