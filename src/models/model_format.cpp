#include "imgsmith/models/model_format.hpp"

#include <cstring>

#include "model_readers.hpp"

namespace imgsmith {
namespace {

using models_detail::le_at;

// The names of the zip's local file headers within `head` (a zip written
// front to back, as torch.save and Keras write theirs).
template <typename Fn>
void for_each_zip_name(std::string_view head, Fn fn) {
  std::size_t at = 0;
  for (int n = 0; n < 16 && at + 30 <= head.size() && head.substr(at, 4) == "PK\x03\x04"; ++n) {
    const std::size_t name_length = le_at(head, at + 26, 2), extra = le_at(head, at + 28, 2);
    if (at + 30 + name_length > head.size()) return;
    const std::string_view name = head.substr(at + 30, name_length);
    if (fn(name)) return;
    // Only stored entries with their size in the header can be stepped over.
    const std::uint64_t flags = le_at(head, at + 6, 2), compressed = le_at(head, at + 18, 4);
    if ((flags & 0x8) != 0) return;
    at += 30 + name_length + extra + static_cast<std::size_t>(compressed);
  }
}

bool is_pytorch_zip(std::string_view head) {
  bool found = false;
  for_each_zip_name(head, [&](std::string_view name) {
    found = name == "data.pkl" || name.ends_with("/data.pkl");
    return found;
  });
  return found;
}

bool is_keras_zip(std::string_view head) {
  bool found = false;
  for_each_zip_name(head, [&](std::string_view name) {
    found = name == "model.weights.h5" || name == "metadata.json" || name == "config.json";
    return found;
  });
  return found;
}

// An ONNX ModelProto starts with ir_version (field 1, a varint, 3 to 15 in
// every ONNX release), followed by another ModelProto field.
bool is_onnx(std::string_view head) {
  if (head.size() < 4 || head[0] != 0x08) return false;
  const auto version = static_cast<unsigned char>(head[1]);
  if (version < 3 || version > 15) return false;
  switch (static_cast<unsigned char>(head[2])) {
    case 0x12:  // producer_name
    case 0x1a:  // producer_version
    case 0x22:  // domain
    case 0x28:  // model_version
    case 0x32:  // doc_string
    case 0x3a:  // graph
    case 0x42:  // opset_import
      return true;
    default:
      return false;
  }
}

}  // namespace

ModelFormat sniff_model_format(std::string_view head) {
  if (head.size() >= 10) {
    // safetensors: a header length that is plausible, then '{'.
    const std::uint64_t length = le_at(head, 0, 8);
    if (length >= 2 && length < (100u << 20) && head[8] == '{' &&
        (head[9] == '"' || head[9] == '}'))
      return ModelFormat::Safetensors;
  }
  if (head.starts_with("GGUF")) return ModelFormat::Gguf;
  // HDF5 holds any data; Keras's model.save and save_weights write their
  // attributes (keras_version, backend, model_config, layer_names) into the
  // root group's header, which follows the superblock.
  if (head.starts_with("\x89HDF\r\n\x1a\n"))
    return head.find("keras_version") != std::string_view::npos ||
                   head.find("model_config") != std::string_view::npos ||
                   head.find("layer_names") != std::string_view::npos
               ? ModelFormat::Keras
               : ModelFormat::None;
  if (head.starts_with("\x93NUMPY")) return ModelFormat::Numpy;
  if (head.starts_with("PK\x03\x04")) {
    if (is_pytorch_zip(head)) return ModelFormat::PyTorch;
    if (is_keras_zip(head)) return ModelFormat::Keras;
    return ModelFormat::None;
  }
  // torch.save's legacy format: a pickle (protocol 2) of torch's magic number.
  static constexpr char kLegacyTorch[] = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";
  if (head.starts_with(std::string_view(kLegacyTorch, sizeof kLegacyTorch - 1)))
    return ModelFormat::PyTorch;
  if (is_onnx(head)) return ModelFormat::Onnx;
  return ModelFormat::None;
}

std::string_view model_format_name(ModelFormat format) {
  switch (format) {
    case ModelFormat::Safetensors:
      return "safetensors";
    case ModelFormat::PyTorch:
      return "pytorch";
    case ModelFormat::Gguf:
      return "gguf";
    case ModelFormat::Onnx:
      return "onnx";
    case ModelFormat::Keras:
      return "keras";
    case ModelFormat::Numpy:
      return "numpy";
    case ModelFormat::None:
      break;
  }
  return "";
}

}  // namespace imgsmith
