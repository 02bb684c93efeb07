// safetensors: a little-endian u64 N, N bytes of JSON (tensor name ->
// dtype, shape, data_offsets relative to the end of the header), then the
// data. Only the header is read.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "model_readers.hpp"

namespace imgsmith::models_detail {
namespace {

using nlohmann::json;

// A header this large is a lie or an attack: the largest real ones (MoE
// models with thousands of tensors) are a few MiB.
constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;
// Lies are listed up to this many; the rest are counted.
constexpr std::size_t kMaxListed = 5;

// bitsandbytes' serialised quantization state (transformers saves 4-bit
// layers as `.weight` plus these; 8-bit layers as int8 `.weight` plus SCB).
// Names specific enough to mark a checkpoint as bitsandbytes-quantized.
bool is_bitsandbytes_aux(const std::string& name) {
  return name.ends_with(".weight.absmax") || name.ends_with(".weight.quant_map") ||
         name.ends_with(".weight.nested_absmax") || name.ends_with(".weight.nested_quant_map") ||
         name.find(".weight.quant_state.") != std::string::npos || name.ends_with(".SCB") ||
         name.ends_with(".weight_format");
}

// FP8 checkpoints' scales: compressed-tensors' (Neural Magic, llm-compressor)
// weight_scale, input_scale and zero points, the KV cache's k_scale and
// v_scale, and DeepSeek-V3's block scales weight_scale_inv.
bool is_fp8_aux(const std::string& name) {
  return name.ends_with(".weight_scale") || name.ends_with(".input_scale") ||
         name.ends_with(".weight_zero_point") || name.ends_with(".k_scale") ||
         name.ends_with(".v_scale") || name.ends_with(".weight_scale_inv");
}

bool is_quantization_aux(const std::string& name) {
  return name.ends_with(".qzeros") || name.ends_with(".scales") || name.ends_with(".g_idx") ||
         is_bitsandbytes_aux(name) || is_fp8_aux(name);
}

struct Span {
  std::uint64_t begin, end;
  const std::string* name;
};

// One tensor's entry as the header gives it; `complete` when it had a
// string dtype, an array of unsigned shape and two unsigned offsets, and
// nothing else nested.
struct Entry {
  std::string name, dtype;
  std::uint64_t elements = 1;
  bool shape_fits = true;  // the product of the dimensions fits 64 bits
  std::size_t rank = 0;
  std::vector<std::uint64_t> offsets;
  bool has_dtype = false, has_shape = false, malformed = false;
  bool complete() const { return has_dtype && has_shape && offsets.size() == 2 && !malformed; }
};

// The header read as a stream of JSON events (nlohmann's SAX interface):
// no document is built, only the entries' few fields are kept. Headers of
// thousands of tensors are read in a fraction of a DOM parse's time.
class HeaderEvents final : public nlohmann::json_sax<json> {
 public:
  std::vector<Entry> entries;
  bool not_an_object = false;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool number_unsigned(number_unsigned_t v) override {
    if (in_tensor() && depth_ == 3 && field_ == Field::Shape) {
      current().shape_fits =
          current().shape_fits && multiply(current().elements, v, current().elements);
      ++current().rank;
      return true;
    }
    if (in_tensor() && depth_ == 3 && field_ == Field::Offsets) {
      current().offsets.push_back(v);
      return true;
    }
    return value();
  }
  bool string(string_t& v) override {
    if (in_tensor() && depth_ == 2 && field_ == Field::Dtype) {
      current().dtype = std::move(v);
      current().has_dtype = true;
      return true;
    }
    return value();
  }
  bool start_object(std::size_t) override {
    if (depth_ == 0) {
      ++depth_;
      return true;
    }
    if (depth_ == 1) {
      tensor_ = !metadata_;
      field_ = Field::Other;
      if (in_tensor()) current().malformed = false;  // its value is an object, as it must be
    } else if (in_tensor() && field_ != Field::Other) {
      current().malformed = true;
    }
    ++depth_;
    return true;
  }
  bool end_object() override {
    --depth_;
    if (depth_ == 1) tensor_ = false;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) not_an_object = true;
    if (in_tensor() && depth_ == 2 && (field_ == Field::Shape || field_ == Field::Offsets)) {
      if (field_ == Field::Shape) current().has_shape = true;
    } else if (in_tensor() && field_ != Field::Other) {
      current().malformed = true;
    }
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      metadata_ = k == "__metadata__";
      // Malformed until its value turns out to be an object.
      if (!metadata_)
        entries.push_back(Entry{std::move(k), {}, 1, true, 0, {}, false, false, true});
    } else if (depth_ == 2 && in_tensor()) {
      field_ = k == "dtype"          ? Field::Dtype
               : k == "shape"        ? Field::Shape
               : k == "data_offsets" ? Field::Offsets
                                     : Field::Other;
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  enum class Field { Dtype, Shape, Offsets, Other };
  bool value() {
    if (depth_ == 0) not_an_object = true;
    if (in_tensor() && depth_ >= 2 && field_ != Field::Other) current().malformed = true;
    return true;
  }
  bool in_tensor() const { return tensor_ && !entries.empty(); }
  Entry& current() { return entries.back(); }

  int depth_ = 0;
  bool tensor_ = false, metadata_ = false;
  Field field_ = Field::Other;
};

// The headers real writers produce, read without a general JSON parser:
// names and dtypes of plain ASCII, shapes and offsets of unsigned integers,
// __metadata__ of plain strings, whitespace anywhere JSON allows it. That is
// several times faster than the SAX parser on the thousands of tensors of a
// large checkpoint, which matters when the weights are seeked over. Anything
// else (escapes, other bytes, other value types, a field given twice) is
// left to the SAX parser, whose reading is the reference: the fast path
// returns nothing, and never a different answer.
class PlainHeader {
 public:
  explicit PlainHeader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  std::optional<std::vector<Entry>> read() {
    std::vector<Entry> entries;
    if (!take('{')) return std::nullopt;
    if (!take('}')) {
      do {
        std::string_view key;
        if (!string(key) || !take(':')) return std::nullopt;
        if (key == "__metadata__") {
          if (!metadata()) return std::nullopt;
          continue;
        }
        Entry e{std::string(key), {}, 1, true, 0, {}, false, false, false};
        if (!tensor(e)) return std::nullopt;
        entries.push_back(std::move(e));
      } while (take(','));
      if (!take('}')) return std::nullopt;
    }
    skip_space();
    if (p_ != end_) return std::nullopt;  // only padding may follow
    return entries;
  }

 private:
  void skip_space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool take(char c) {
    skip_space();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  // A string of printable ASCII without escapes.
  bool string(std::string_view& out) {
    if (!take('"')) return false;
    const char* begin = p_;
    while (p_ != end_ && *p_ != '"') {
      const auto c = static_cast<unsigned char>(*p_);
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;
      ++p_;
    }
    if (p_ == end_) return false;
    out = std::string_view(begin, static_cast<std::size_t>(p_ - begin));
    ++p_;
    return true;
  }
  bool unsigned_number(std::uint64_t& out) {
    skip_space();
    const char* begin = p_;
    out = 0;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
      const auto digit = static_cast<std::uint64_t>(*p_ - '0');
      if (out > (UINT64_MAX - digit) / 10) return false;  // past 64 bits: the SAX parser decides
      out = out * 10 + digit;
      ++p_;
    }
    if (p_ == begin || (*begin == '0' && p_ - begin > 1)) return false;
    // A fraction or an exponent makes it a float, which the SAX parser reads.
    return p_ == end_ || (*p_ != '.' && *p_ != 'e' && *p_ != 'E');
  }
  template <typename Fn>
  bool number_array(Fn each) {
    if (!take('[')) return false;
    if (take(']')) return true;
    do {
      std::uint64_t v = 0;
      if (!unsigned_number(v)) return false;
      each(v);
    } while (take(','));
    return take(']');
  }
  bool metadata() {
    if (!take('{')) return false;
    if (take('}')) return true;
    do {
      std::string_view key, value;
      if (!string(key) || !take(':') || !string(value)) return false;
    } while (take(','));
    return take('}');
  }
  bool tensor(Entry& e) {
    if (!take('{')) return false;
    bool dtype = false, shape = false, offsets = false;
    if (take('}')) return true;
    do {
      std::string_view key;
      if (!string(key) || !take(':')) return false;
      if (key == "dtype") {
        std::string_view value;
        if (dtype || !string(value)) return false;
        e.dtype = std::string(value);
        e.has_dtype = dtype = true;
      } else if (key == "shape") {
        if (shape || !number_array([&](std::uint64_t d) {
              e.shape_fits = e.shape_fits && multiply(e.elements, d, e.elements);
              ++e.rank;
            }))
          return false;
        e.has_shape = shape = true;
      } else if (key == "data_offsets") {
        if (offsets || !number_array([&](std::uint64_t v) { e.offsets.push_back(v); }))
          return false;
        offsets = true;
      } else {
        // Another field: a plain string or number is ignored, as the SAX
        // reading ignores it; anything else goes to the SAX parser.
        std::string_view ignored;
        std::uint64_t number = 0;
        skip_space();
        if (p_ != end_ && *p_ == '"' ? !string(ignored) : !unsigned_number(number)) return false;
      }
    } while (take(','));
    return take('}');
  }

  const char* p_;
  const char* end_;
};

}  // namespace

bool plain_header_agrees(std::string_view text) {
  const auto plain = PlainHeader(text).read();
  if (!plain) return true;  // left to the SAX parser: nothing to compare
  HeaderEvents events;
  const std::string copy(text);
  if (!json::sax_parse(copy, &events) || events.not_an_object) return false;
  if (events.entries.size() != plain->size()) return false;
  for (std::size_t i = 0; i < plain->size(); ++i) {
    const Entry& a = (*plain)[i];
    const Entry& b = events.entries[i];
    if (a.name != b.name || a.dtype != b.dtype || a.elements != b.elements ||
        a.shape_fits != b.shape_fits || a.offsets != b.offsets || a.has_dtype != b.has_dtype ||
        a.has_shape != b.has_shape || a.complete() != b.complete())
      return false;
  }
  return true;
}

void read_safetensors(ForwardReader& in, std::uint64_t size, ModelFile& out) {
  const std::uint64_t header_bytes = read_le(in, 8, "the header length");
  if (header_bytes > kMaxHeaderBytes || header_bytes + 8 > size)
    throw Malformed("its header length (" + std::to_string(header_bytes) +
                    " bytes) is larger than " +
                    (header_bytes > kMaxHeaderBytes ? "any real header" : "the file"));
  const std::string text = read_bytes(in, header_bytes, "the JSON header");
  HeaderEvents events;
  if (auto plain = PlainHeader(text).read()) {
    events.entries = std::move(*plain);
  } else if (!json::sax_parse(text, &events) || events.not_an_object) {
    throw Malformed("its header is not a JSON object");
  }
  const std::uint64_t data_bytes = size - 8 - header_bytes;

  std::vector<Span> spans;
  std::vector<std::string> lies;
  std::size_t lie_count = 0;
  const auto lie = [&](const std::string& name, const std::string& what) {
    if (++lie_count <= kMaxListed) lies.push_back("'" + name + "' " + what);
  };
  std::uint64_t aux_elements = 0;
  bool bitsandbytes = false;
  for (const Entry& entry : events.entries) {
    const std::string& name = entry.name;
    if (!entry.complete()) {
      lie(name, "has no dtype, shape and data_offsets");
      continue;
    }
    const std::uint64_t elements = entry.elements;
    const bool shape_ok = entry.shape_fits;
    const std::uint64_t begin = entry.offsets[0];
    const std::uint64_t end = entry.offsets[1];
    const std::string& type = entry.dtype;
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
    if (bits == 0) {
      lie(name, "has a dtype imgsmith does not know (" + type + ")");
      continue;
    }
    if (expected / 8 + (expected % 8 != 0 ? 1 : 0) != end - begin) {
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
    if (type == "U8" && name.ends_with(".weight")) out.packed_u8_elements += elements;
    if (is_quantization_aux(name)) aux_elements += elements;
    if (is_bitsandbytes_aux(name)) bitsandbytes = true;
    if (!is_quantization_aux(name) && kept_at_16_bits(name, entry.rank))
      out.kept_16bit_elements += elements;
  }
  // Only a quantized checkpoint's scales and zero-points are not parameters.
  const bool fp8 = std::any_of(out.dtype_parameters.begin(), out.dtype_parameters.end(),
                               [](const auto& d) { return d.first.starts_with("F8_"); });
  if (out.packed_elements > 0 || bitsandbytes || fp8) out.quantization_aux_elements = aux_elements;
  if (!bitsandbytes) out.packed_u8_elements = 0;  // a uint8 weight of its own, not packed
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
