// The readers' shared helpers and the dtype tables of data/model-dtypes.json.
#include <nlohmann/json.hpp>

#include "model_readers.hpp"
#include "models_data.hpp"

namespace imgsmith::models_detail {
namespace {

using nlohmann::json;

struct DtypeTables {
  std::map<std::string, unsigned> safetensors;
  std::map<std::uint64_t, OnnxType> onnx;
  std::map<std::uint32_t, GgmlType> ggml;
  std::map<std::string, TorchStorage> torch;
};

const DtypeTables& tables() {
  static const DtypeTables t = [] {
    DtypeTables out;
    const json doc = json::parse(models_data().at("model-dtypes.json"));
    for (const auto& [name, bits] : doc.at("safetensors_bits").items())
      out.safetensors[name] = bits.get<unsigned>();
    for (const auto& [id, v] : doc.at("onnx_types").items())
      out.onnx[std::stoull(id)] = OnnxType{v.at(0).get<std::string>(), v.at(1).get<unsigned>()};
    for (const auto& [id, v] : doc.at("ggml_types").items())
      out.ggml[static_cast<std::uint32_t>(std::stoul(id))] = GgmlType{
          v.at(0).get<std::string>(), v.at(1).get<std::uint64_t>(), v.at(2).get<std::uint64_t>()};
    for (const auto& [name, v] : doc.at("torch_storages").items())
      out.torch[name] = TorchStorage{v.at(0).get<std::string>(), v.at(1).get<unsigned>()};
    return out;
  }();
  return t;
}

}  // namespace

std::uint64_t read_le(ForwardReader& in, std::size_t bytes, const char* what) {
  char buf[8];
  if (in.read(buf, bytes) != bytes) throw Malformed(std::string("the file ends inside ") + what);
  return le_at(std::string_view(buf, bytes), 0, bytes);
}

std::string read_bytes(ForwardReader& in, std::uint64_t n, const char* what) {
  std::string out;
  if (!in.read_exact(out, static_cast<std::size_t>(n)))
    throw Malformed(std::string("the file ends inside ") + what);
  return out;
}

void skip_bytes(ForwardReader& in, std::uint64_t n, const char* what) {
  if (in.skip(n) != n) throw Malformed(std::string("the file ends inside ") + what);
}

std::uint64_t le_at(std::string_view s, std::size_t at, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i)
    v |= std::uint64_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
  return v;
}

bool multiply(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

unsigned safetensors_dtype_bits(const std::string& dtype) {
  const auto it = tables().safetensors.find(dtype);
  return it == tables().safetensors.end() ? 0 : it->second;
}

OnnxType onnx_type(std::uint64_t data_type) {
  const auto it = tables().onnx.find(data_type);
  return it == tables().onnx.end() ? OnnxType{"type " + std::to_string(data_type), 0} : it->second;
}

GgmlType ggml_type(std::uint32_t id) {
  const auto it = tables().ggml.find(id);
  return it == tables().ggml.end() ? GgmlType{"ggml type " + std::to_string(id), 0, 0} : it->second;
}

TorchStorage torch_storage(const std::string& class_name) {
  const auto it = tables().torch.find(class_name);
  return it == tables().torch.end() ? TorchStorage{} : it->second;
}

}  // namespace imgsmith::models_detail
