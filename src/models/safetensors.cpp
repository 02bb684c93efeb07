// safetensors: a little-endian u64 N, N bytes of JSON (tensor name ->
// dtype, shape, data_offsets relative to the end of the header), then the
// data. Only the header is read.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "model_readers.hpp"

namespace imgsmith::models_detail {
namespace {

using nlohmann::json;

// A header this large is a lie or an attack: the largest real ones (MoE
// models with thousands of tensors) are a few MiB.
constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;
// Lies are listed up to this many; the rest are counted.
constexpr std::size_t kMaxListed = 5;

bool is_quantization_aux(const std::string& name) {
  return name.ends_with(".qzeros") || name.ends_with(".scales") || name.ends_with(".g_idx");
}

struct Span {
  std::uint64_t begin, end;
  const std::string* name;
};

}  // namespace

void read_safetensors(ForwardReader& in, std::uint64_t size, ModelFile& out) {
  const std::uint64_t header_bytes = read_le(in, 8, "the header length");
  if (header_bytes > kMaxHeaderBytes || header_bytes + 8 > size)
    throw Malformed("its header length (" + std::to_string(header_bytes) +
                    " bytes) is larger than " +
                    (header_bytes > kMaxHeaderBytes ? "any real header" : "the file"));
  const std::string text = read_bytes(in, header_bytes, "the JSON header");
  json header;
  try {
    header = json::parse(text);
  } catch (const json::exception&) {
    throw Malformed("its header is not JSON");
  }
  if (!header.is_object()) throw Malformed("its header is not a JSON object");
  const std::uint64_t data_bytes = size - 8 - header_bytes;

  std::vector<Span> spans;
  std::vector<std::string> lies;
  std::size_t lie_count = 0;
  const auto lie = [&](const std::string& name, const std::string& what) {
    if (++lie_count <= kMaxListed) lies.push_back("'" + name + "' " + what);
  };
  std::uint64_t aux_elements = 0;
  for (const auto& [name, tensor] : header.items()) {
    if (name == "__metadata__") continue;
    const auto dtype = tensor.find("dtype");
    const auto shape = tensor.find("shape");
    const auto offsets = tensor.find("data_offsets");
    if (!tensor.is_object() || dtype == tensor.end() || !dtype->is_string() ||
        shape == tensor.end() || !shape->is_array() || offsets == tensor.end() ||
        !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned()) {
      lie(name, "has no dtype, shape and data_offsets");
      continue;
    }
    std::uint64_t elements = 1;
    bool shape_ok = true;
    for (const auto& d : *shape)
      shape_ok = shape_ok && d.is_number_unsigned() &&
                 multiply(elements, d.get<std::uint64_t>(), elements);
    const std::uint64_t begin = (*offsets)[0].get<std::uint64_t>();
    const std::uint64_t end = (*offsets)[1].get<std::uint64_t>();
    const std::string type = dtype->get<std::string>();
    const unsigned bits = safetensors_dtype_bits(type);
    std::uint64_t expected = 0;
    if (!shape_ok || !multiply(elements, bits, expected)) {
      lie(name, "has a shape too large to hold");
      continue;
    }
    if (end < begin || end > data_bytes) {
      lie(name, "points past the end of the file (offsets " + std::to_string(begin) + "-" +
                    std::to_string(end) + ", " + std::to_string(data_bytes) + " bytes of data)");
      continue;
    }
    if (bits != 0 && (expected + 7) / 8 != end - begin) {
      lie(name, "claims " + std::to_string(end - begin) + " bytes for " + std::to_string(elements) +
                    " " + type + " elements");
      continue;
    }
    spans.push_back(Span{begin, end, &name});
    ++out.tensors;
    out.parameters += elements;
    out.weight_bytes += end - begin;
    out.dtype_parameters[type] += elements;
    if (type == "I32" && name.ends_with(".qweight")) out.packed_elements += elements;
    if (is_quantization_aux(name)) aux_elements += elements;
  }
  // Only a quantized checkpoint's scales and zero-points are not parameters.
  if (out.packed_elements > 0) out.quantization_aux_elements = aux_elements;
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::size_t overlaps = 0;
  std::string first_overlap;
  for (std::size_t i = 1; i < spans.size(); ++i)
    if (spans[i].begin < spans[i - 1].end && overlaps++ == 0)
      first_overlap = "'" + *spans[i].name + "' overlaps '" + *spans[i - 1].name + "'";
  if (overlaps > 0)
    out.warnings.push_back(
        "its tensors overlap (" + first_overlap +
        (overlaps > 1 ? ", and " + std::to_string(overlaps - 1) + " more" : "") +
        "): a valid file never does; the bytes are counted as the header claims");
  if (lie_count > 0) {
    std::string message = "its header does not hold together: ";
    for (std::size_t i = 0; i < lies.size(); ++i) message += (i ? "; " : "") + lies[i];
    if (lie_count > lies.size())
      message += "; and " + std::to_string(lie_count - lies.size()) + " more";
    out.warnings.push_back(message + " (those tensors are not counted)");
  }
}

}  // namespace imgsmith::models_detail
