// GGUF (llama.cpp): magic, version, tensor and metadata counts, the
// metadata key/values, the tensor infos; the data starts at the next
// multiple of general.alignment. Read front to back, values the KV cache
// does not need stepped over (a tokenizer's vocabulary is megabytes).
#include <algorithm>

#include "model_readers.hpp"

namespace imgsmith::models_detail {
namespace {

enum GgufType : std::uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// Limits no real file comes near; past them the file is hostile.
constexpr std::uint64_t kMaxCount = 10'000'000;
constexpr std::uint64_t kMaxKeyBytes = 65'536;
constexpr std::uint64_t kMaxGgufStringBytes = 64ull << 20;
constexpr std::uint32_t kMaxDims = 8;
constexpr int kMaxArrayDepth = 4;

std::size_t scalar_bytes(std::uint32_t type) {
  switch (type) {
    case kU8:
    case kI8:
    case kBool:
      return 1;
    case kU16:
    case kI16:
      return 2;
    case kU32:
    case kI32:
    case kF32:
      return 4;
    case kU64:
    case kI64:
    case kF64:
      return 8;
    default:
      return 0;
  }
}

bool is_integer(std::uint32_t type) {
  return type != kF32 && type != kF64 && type != kBool && scalar_bytes(type) != 0;
}

std::int64_t as_signed(std::uint64_t raw, std::size_t bytes) {
  const unsigned shift = static_cast<unsigned>(64 - 8 * bytes);
  return static_cast<std::int64_t>(raw << shift) >> shift;
}

class GgufReader {
 public:
  GgufReader(ForwardReader& in, std::uint64_t size, ModelFile& out)
      : in_(in), size_(size), out_(out) {}

  void read() {
    if (read_bytes(in_, 4, "the magic") != "GGUF") throw Malformed("it does not start with GGUF");
    const std::uint64_t version = read_le(in_, 4, "the version");
    if (version < 2 || version > 3)
      throw Malformed("GGUF version " + std::to_string(version) +
                      " is not read (versions 2 and 3 are)");
    const std::uint64_t tensors = read_le(in_, 8, "the tensor count");
    const std::uint64_t kvs = read_le(in_, 8, "the metadata count");
    if (tensors > kMaxCount || kvs > kMaxCount)
      throw Malformed("it claims " + std::to_string(tensors) + " tensors and " +
                      std::to_string(kvs) + " metadata values");
    for (std::uint64_t i = 0; i < kvs; ++i) read_kv();
    std::vector<Info> infos;
    infos.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(tensors, 1 << 16)));
    for (std::uint64_t i = 0; i < tensors; ++i) infos.push_back(read_info());
    count(infos);
    settle_shape();
  }

 private:
  struct Info {
    std::string name;
    std::uint64_t elements = 1;
    bool elements_ok = true;
    std::uint32_t rank = 0;
    std::uint32_t type = 0;
    std::uint64_t offset = 0;
  };

  std::string read_string(std::uint64_t limit, const char* what) {
    const std::uint64_t n = read_le(in_, 8, what);
    if (n > limit)
      throw Malformed(std::string("it claims a ") + std::to_string(n) + "-byte " + what);
    return read_bytes(in_, n, what);
  }
  void skip_string(const char* what) {
    const std::uint64_t n = read_le(in_, 8, what);
    if (n > kMaxGgufStringBytes)
      throw Malformed(std::string("it claims a ") + std::to_string(n) + "-byte " + what);
    skip_bytes(in_, n, what);
  }

  // Reads one value; integers are kept (the largest, for an array of them),
  // strings only when `keep_string`.
  void read_value(std::uint32_t type, int depth, std::optional<std::int64_t>& integer,
                  std::string* keep_string) {
    if (type == kString) {
      if (keep_string != nullptr)
        *keep_string = read_string(kMaxGgufStringBytes, "metadata string");
      else
        skip_string("metadata string");
      return;
    }
    if (type == kArray) {
      if (depth >= kMaxArrayDepth) throw Malformed("its metadata nests arrays too deep");
      const auto element = static_cast<std::uint32_t>(read_le(in_, 4, "an array type"));
      const std::uint64_t n = read_le(in_, 8, "an array length");
      if (n > kMaxCount * 100) throw Malformed("it claims an array of " + std::to_string(n));
      if (depth == 0) top_array_length_ = n;
      if (const std::size_t bytes = scalar_bytes(element); bytes != 0 && !is_integer(element)) {
        skip_bytes(in_, n * bytes, "a metadata array");
        return;
      }
      for (std::uint64_t i = 0; i < n; ++i) read_value(element, depth + 1, integer, nullptr);
      return;
    }
    const std::size_t bytes = scalar_bytes(type);
    if (bytes == 0)
      throw Malformed("its metadata has a value of unknown type " + std::to_string(type));
    const std::uint64_t raw = read_le(in_, bytes, "a metadata value");
    if (!is_integer(type)) return;
    const bool is_signed = type == kI8 || type == kI16 || type == kI32 || type == kI64;
    const std::int64_t v = is_signed ? as_signed(raw, bytes) : static_cast<std::int64_t>(raw);
    integer = integer ? std::max(*integer, v) : v;
  }

  void read_kv() {
    const std::string key = read_string(kMaxKeyBytes, "metadata key");
    const auto type = static_cast<std::uint32_t>(read_le(in_, 4, "a metadata type"));
    std::optional<std::int64_t> integer;
    std::string text;
    read_value(type, 0, integer, key == "general.architecture" ? &text : nullptr);
    if (key == "general.architecture") architecture_ = text;
    // The vocabulary is the token list's length (<arch>.vocab_size is
    // often left out).
    if (key == "tokenizer.ggml.tokens" && type == kArray) vocab_tokens_ = top_array_length_;
    if (integer) integers_[key] = *integer;
  }

  Info read_info() {
    Info info;
    info.name = read_string(kMaxKeyBytes, "tensor name");
    const auto dims = static_cast<std::uint32_t>(read_le(in_, 4, "a tensor's dimension count"));
    if (dims > kMaxDims)
      throw Malformed("tensor '" + info.name + "' claims " + std::to_string(dims) + " dimensions");
    info.rank = dims;
    for (std::uint32_t d = 0; d < dims; ++d)
      info.elements_ok =
          multiply(info.elements, read_le(in_, 8, "a tensor dimension"), info.elements) &&
          info.elements_ok;
    info.type = static_cast<std::uint32_t>(read_le(in_, 4, "a tensor type"));
    info.offset = read_le(in_, 8, "a tensor offset");
    return info;
  }

  void count(const std::vector<Info>& infos) {
    std::uint64_t alignment = 32;
    if (const auto it = integers_.find("general.alignment"); it != integers_.end()) {
      if (it->second <= 0 || it->second > (1 << 20) || (it->second & (it->second - 1)) != 0)
        throw Malformed("its general.alignment is " + std::to_string(it->second));
      alignment = static_cast<std::uint64_t>(it->second);
    }
    const std::uint64_t data_start = (in_.position() + alignment - 1) / alignment * alignment;
    const std::uint64_t data_bytes = size_ > data_start ? size_ - data_start : 0;
    std::size_t lies = 0;
    std::string first_lie;
    for (const auto& info : infos) {
      const GgmlType type = ggml_type(info.type);
      std::uint64_t bytes = 0;
      std::string lie;
      if (!info.elements_ok) {
        lie = "has a shape too large to hold";
      } else if (type.block_elements == 0) {
        lie = "has an unknown " + type.name;
      } else if (info.elements % type.block_elements != 0 ||
                 !multiply(info.elements / type.block_elements, type.block_bytes, bytes)) {
        lie = "has " + std::to_string(info.elements) + " elements, not whole " + type.name +
              " blocks";
      } else if (info.offset > data_bytes || bytes > data_bytes - info.offset) {
        lie = "points past the end of the file";
      }
      if (!lie.empty()) {
        if (lies++ == 0) first_lie = "'" + info.name + "' " + lie;
        continue;
      }
      ++out_.tensors;
      out_.parameters += info.elements;
      out_.weight_bytes += bytes;
      out_.dtype_parameters[type.name] += info.elements;
      if (kept_at_16_bits(info.name, info.rank)) out_.kept_16bit_elements += info.elements;
    }
    if (lies > 0)
      out_.warnings.push_back("its tensor infos do not hold together: " + first_lie +
                              (lies > 1 ? "; and " + std::to_string(lies - 1) + " more" : "") +
                              " (those tensors are not counted)");
  }

  std::uint64_t arch_value(const std::string& suffix) const {
    const auto it = integers_.find(architecture_ + "." + suffix);
    return it == integers_.end() || it->second < 0 ? 0 : static_cast<std::uint64_t>(it->second);
  }

  void settle_shape() {
    ModelShape& s = out_.shape;
    s.architecture = architecture_;
    if (architecture_.empty()) return;
    s.layers = arch_value("block_count");
    s.context_length = arch_value("context_length");
    s.hidden_size = arch_value("embedding_length");
    const std::uint64_t experts = std::max<std::uint64_t>(arch_value("expert_used_count"), 1);
    // A width past any model's is a lie: left unknown, not wrapped.
    if (__builtin_mul_overflow(arch_value("feed_forward_length"), experts, &s.intermediate_size))
      s.intermediate_size = 0;
    s.vocab_size = arch_value("vocab_size");
    if (s.vocab_size == 0) s.vocab_size = vocab_tokens_;
    // Which layers slide is the architecture's rule (collect_models).
    s.sliding_window = arch_value("attention.sliding_window");
    s.attention_heads = arch_value("attention.head_count");
    s.kv_heads = arch_value("attention.head_count_kv");
    if (s.kv_heads == 0) s.kv_heads = s.attention_heads;  // absent: no grouped-query attention
    const std::uint64_t head_dim = s.attention_heads > 0 ? s.hidden_size / s.attention_heads : 0;
    s.key_dim = arch_value("attention.key_length");
    s.value_dim = arch_value("attention.value_length");
    if (s.key_dim == 0) s.key_dim = head_dim;
    if (s.value_dim == 0) s.value_dim = head_dim;
  }

  ForwardReader& in_;
  std::uint64_t size_;
  ModelFile& out_;
  std::string architecture_;
  std::map<std::string, std::int64_t> integers_;
  std::uint64_t top_array_length_ = 0;
  std::uint64_t vocab_tokens_ = 0;
};

}  // namespace

void read_gguf(ForwardReader& in, std::uint64_t size, ModelFile& out) {
  GgufReader(in, size, out).read();
}

}  // namespace imgsmith::models_detail
