// What the format readers share: little-endian fields from a forward
// reader, the dtype tables of data/model-dtypes.json, and the one way a
// reader gives up on a file (a Malformed, which read_model_file turns into
// a warning).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "imgsmith/models/model_file.hpp"
#include "imgsmith/util/forward_reader.hpp"

namespace imgsmith::models_detail {

// The content is not what its format says: the message says where.
class Malformed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::uint64_t read_le(ForwardReader& in, std::size_t bytes, const char* what);
std::string read_bytes(ForwardReader& in, std::uint64_t n, const char* what);
void skip_bytes(ForwardReader& in, std::uint64_t n, const char* what);
std::uint64_t le_at(std::string_view s, std::size_t at, std::size_t bytes);

// out = a * b; false when that overflows.
bool multiply(std::uint64_t a, std::uint64_t b, std::uint64_t& out);

// Bits per element of a safetensors dtype ("BF16" -> 16), 0 if unknown.
unsigned safetensors_dtype_bits(const std::string& dtype);
// ONNX TensorProto.data_type -> its name and bits per element (0: unknown).
struct OnnxType {
  std::string name;
  unsigned bits = 0;
};
OnnxType onnx_type(std::uint64_t data_type);
// ggml's tensor type -> name, elements per block and bytes per block
// (block_elements 0: unknown).
struct GgmlType {
  std::string name;
  std::uint64_t block_elements = 0;
  std::uint64_t block_bytes = 0;
};
GgmlType ggml_type(std::uint32_t id);
// torch's storage class ("BFloat16Storage") -> dtype name and bytes per
// element (0: unknown).
struct TorchStorage {
  std::string dtype;
  unsigned bytes = 0;
};
TorchStorage torch_storage(const std::string& class_name);

// Whether the fast reading of a plain safetensors header (the common case)
// gives what the SAX parser gives, or leaves the header to it: for tests and
// the fuzzer.
bool plain_header_agrees(std::string_view text);
void read_safetensors(ForwardReader& in, std::uint64_t size, ModelFile& out);
void read_gguf(ForwardReader& in, std::uint64_t size, ModelFile& out);
void read_pytorch(ForwardReader& in, std::uint64_t size, ModelFile& out);
void read_onnx(ForwardReader& in, std::uint64_t size, ModelFile& out);

}  // namespace imgsmith::models_detail
