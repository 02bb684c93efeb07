// ONNX: a protobuf ModelProto, read as a stream of fields. Only the
// graph's initializers are opened (dims, data_type, name, external data);
// their raw data, the nodes and everything else are stepped over.
#include <set>

#include "model_readers.hpp"

namespace imgsmith::models_detail {
namespace {

enum Wire : std::uint64_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

constexpr std::uint64_t kModelGraph = 7;        // ModelProto.graph
constexpr std::uint64_t kGraphInitializer = 5;  // GraphProto.initializer
constexpr std::uint64_t kTensorDims = 1, kTensorDataType = 2, kTensorName = 8,
                        kTensorExternalData = 13, kTensorDataLocation = 14;
constexpr std::uint64_t kEntryKey = 1, kEntryValue = 2;  // StringStringEntryProto
constexpr std::uint64_t kMaxOnnxStringBytes = 1 << 20;

class ProtoReader {
 public:
  ProtoReader(ForwardReader& in, std::uint64_t size, ModelFile& out)
      : in_(in), size_(size), out_(out) {}

  void read() {
    const std::uint64_t end = size_;
    while (in_.position() < end) {
      const auto [field, wire] = tag();
      if (field == kModelGraph && wire == kLength) {
        const std::uint64_t length = varint();
        graph(bounded_end(length));
      } else {
        skip(wire);
      }
    }
    if (!lies_.empty())
      out_.warnings.push_back("initializers that do not hold together are not counted: " + lies_);
  }

 private:
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      const auto byte = static_cast<unsigned char>(read_le(in_, 1, "a protobuf varint"));
      v |= std::uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return v;
    }
    throw Malformed("a protobuf varint runs past 10 bytes");
  }
  std::pair<std::uint64_t, std::uint64_t> tag() {
    const std::uint64_t t = varint();
    return {t >> 3, t & 7};
  }
  std::uint64_t bounded_end(std::uint64_t length) {
    const std::uint64_t end = in_.position() + length;
    if (length > size_ || end > size_)
      throw Malformed("a protobuf field claims more bytes than the file");
    return end;
  }
  void skip(std::uint64_t wire) {
    switch (wire) {
      case kVarint:
        varint();
        return;
      case kFixed64:
        skip_bytes(in_, 8, "a protobuf field");
        return;
      case kFixed32:
        skip_bytes(in_, 4, "a protobuf field");
        return;
      case kLength: {
        const std::uint64_t length = varint();
        skip_bytes(in_, bounded_end(length) - in_.position(), "a protobuf field");
        return;
      }
      default:
        throw Malformed("a protobuf field has wire type " + std::to_string(wire) +
                        " (not an ONNX model)");
    }
  }
  std::string text(const char* what) {
    const std::uint64_t length = varint();
    if (length > kMaxOnnxStringBytes)
      throw Malformed(std::string("a ") + what + " is absurdly long");
    return read_bytes(in_, length, what);
  }
  void at_end(std::uint64_t end, const char* what) {
    if (in_.position() != end) throw Malformed(std::string("a ") + what + " overruns its length");
  }

  void graph(std::uint64_t end) {
    while (in_.position() < end) {
      const auto [field, wire] = tag();
      if (field == kGraphInitializer && wire == kLength)
        initializer(bounded_end(varint()));
      else
        skip(wire);
    }
    at_end(end, "graph");
  }

  void initializer(std::uint64_t end) {
    std::uint64_t elements = 1, data_type = 0;
    bool elements_ok = true, external = false;
    std::size_t rank = 0;
    std::string name, location;
    while (in_.position() < end) {
      const auto [field, wire] = tag();
      if (field == kTensorDims && wire == kVarint) {
        elements_ok = multiply(elements, varint(), elements) && elements_ok;
        ++rank;
      } else if (field == kTensorDims && wire == kLength) {  // packed
        const std::uint64_t dims_end = bounded_end(varint());
        while (in_.position() < dims_end) {
          elements_ok = multiply(elements, varint(), elements) && elements_ok;
          ++rank;
        }
      } else if (field == kTensorDataType && wire == kVarint) {
        data_type = varint();
      } else if (field == kTensorName && wire == kLength) {
        name = text("tensor name");
      } else if (field == kTensorDataLocation && wire == kVarint) {
        external = varint() == 1;  // EXTERNAL
      } else if (field == kTensorExternalData && wire == kLength) {
        const std::uint64_t entry_end = bounded_end(varint());
        std::string key, value;
        while (in_.position() < entry_end) {
          const auto [f, w] = tag();
          if (f == kEntryKey && w == kLength)
            key = text("external data key");
          else if (f == kEntryValue && w == kLength)
            value = text("external data value");
          else
            skip(w);
        }
        if (key == "location") location = value;
      } else {
        skip(wire);
      }
    }
    at_end(end, "tensor");
    const OnnxType type = onnx_type(data_type);
    std::uint64_t bits = 0;
    if (!elements_ok || type.bits == 0 || !multiply(elements, type.bits, bits)) {
      if (lies_.size() < 400)
        lies_ += (lies_.empty() ? "'" : "; '") + name + "' (" + type.name + ")";
      return;
    }
    const std::uint64_t bytes = bits / 8 + (bits % 8 != 0 ? 1 : 0);
    // Inline data lies within the file: a larger claim is not counted.
    if (!external && bytes > size_) {
      if (lies_.size() < 400)
        lies_ += (lies_.empty() ? "'" : "; '") + name + "' (larger than the file)";
      return;
    }
    ++out_.tensors;
    out_.parameters += elements;
    out_.weight_bytes += bytes;
    out_.dtype_parameters[type.name] += elements;
    if (kept_at_16_bits(name, rank)) out_.kept_16bit_elements += elements;
    if (external && !location.empty() && external_.insert(location).second)
      out_.external_data.push_back(location);
  }

  ForwardReader& in_;
  std::uint64_t size_;
  ModelFile& out_;
  std::set<std::string> external_;
  std::string lies_;
};

}  // namespace

void read_onnx(ForwardReader& in, std::uint64_t size, ModelFile& out) {
  ProtoReader(in, size, out).read();
}

}  // namespace imgsmith::models_detail
