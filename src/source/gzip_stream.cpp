#include "gzip_stream.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "imgsmith/source/layer_scan.hpp"
#include "imgsmith/util/error.hpp"

#ifdef IMGSMITH_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

namespace imgsmith {

const char* gzip_inflater() {
#ifdef IMGSMITH_HAVE_ISAL
  return "ISA-L " IMGSMITH_ISAL_VERSION;
#else
  return "zlib";
#endif
}

namespace detail {
namespace {

// Input is read in pieces this large: large enough that the decoder runs
// long stretches between calls, small enough to stay in the L2 cache.
constexpr std::size_t kInputChunk = 256 * 1024;

// One call of a decoder: what it took and gave, and whether the member
// (trailer included) is done.
struct Step {
  std::size_t consumed = 0;
  std::size_t produced = 0;
  bool member_done = false;
};

#ifdef IMGSMITH_HAVE_ISAL

const char* inflate_error(int code) {
  switch (code) {
    case ISAL_INVALID_BLOCK:
      return "an invalid deflate block";
    case ISAL_INVALID_SYMBOL:
      return "an invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
      return "a back-reference before the start of the data";
    case ISAL_INVALID_WRAPPER:
      return "an invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
      return "a compression method other than deflate";
    case ISAL_INCORRECT_CHECKSUM:
      return "a CRC-32 that does not match the data";
    case ISAL_NEED_DICT:
      return "a preset dictionary, which gzip never uses";
    default:
      return "an error ISA-L could not name";
  }
}

// ISA-L reads the gzip header and checks the CRC-32; the length is checked
// here, from the last 8 bytes consumed (the trailer, which may straddle two
// reads).
class Decoder {
 public:
  void start() {
    isal_inflate_init(&state_);
    state_.crc_flag = ISAL_GZIP;
    member_out_ = 0;
    tail_size_ = 0;
  }

  Step step(const unsigned char* in, std::size_t in_size, unsigned char* out, std::size_t out_size,
            const std::string& label) {
    state_.next_in = const_cast<unsigned char*>(in);
    state_.avail_in = static_cast<std::uint32_t>(std::min<std::size_t>(in_size, UINT32_MAX));
    state_.next_out = out;
    state_.avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(out_size, UINT32_MAX));
    const std::uint32_t room = state_.avail_out;
    const int result = isal_inflate(&state_);
    Step s;
    s.consumed = static_cast<std::size_t>(state_.next_in - in);
    s.produced = room - state_.avail_out;
    remember(in, s.consumed);
    member_out_ += s.produced;
    if (result != ISAL_DECOMP_OK)
      throw InputError(label + ": corrupt gzip data (" + inflate_error(result) + ")" +
                       kDamagedAdvice);
    s.member_done = state_.block_state == ISAL_BLOCK_FINISH;
    if (s.member_done) check_length(label);
    return s;
  }

 private:
  void remember(const unsigned char* from, std::size_t n) {
    if (n >= tail_.size()) {
      std::memcpy(tail_.data(), from + n - tail_.size(), tail_.size());
      tail_size_ = tail_.size();
      return;
    }
    const std::size_t keep = std::min(tail_size_, tail_.size() - n);
    std::memmove(tail_.data(), tail_.data() + tail_size_ - keep, keep);
    std::memcpy(tail_.data() + keep, from, n);
    tail_size_ = keep + n;
  }

  void check_length(const std::string& label) const {
    if (tail_size_ < tail_.size())
      throw InputError(label + ": corrupt gzip data (a member without its trailer)" +
                       kDamagedAdvice);
    const std::uint32_t isize =
        static_cast<std::uint32_t>(tail_[4]) | static_cast<std::uint32_t>(tail_[5]) << 8 |
        static_cast<std::uint32_t>(tail_[6]) << 16 | static_cast<std::uint32_t>(tail_[7]) << 24;
    if (isize != static_cast<std::uint32_t>(member_out_))
      throw InputError(label + ": corrupt gzip data (the trailer gives a length of " +
                       std::to_string(isize) + " bytes modulo 2^32, the member decoded to " +
                       std::to_string(member_out_) + ")" + kDamagedAdvice);
  }

  inflate_state state_{};
  std::uint64_t member_out_ = 0;
  std::array<unsigned char, 8> tail_{};
  std::size_t tail_size_ = 0;
};

#else

// zlib in gzip mode (window bits 31) reads the header and checks the CRC-32
// and the length itself.
class Decoder {
 public:
  Decoder() = default;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  ~Decoder() {
    if (initialised_) inflateEnd(&z_);
  }

  void start() {
    if (!initialised_) {
      if (inflateInit2(&z_, 31) != Z_OK) throw std::bad_alloc();
      initialised_ = true;
    } else {
      inflateReset(&z_);
    }
  }

  Step step(const unsigned char* in, std::size_t in_size, unsigned char* out, std::size_t out_size,
            const std::string& label) {
    z_.next_in = const_cast<Bytef*>(in);
    z_.avail_in = static_cast<uInt>(std::min<std::size_t>(in_size, UINT32_MAX));
    z_.next_out = out;
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(out_size, UINT32_MAX));
    const uInt given = z_.avail_in, room = z_.avail_out;
    const int result = inflate(&z_, Z_NO_FLUSH);
    Step s;
    s.consumed = given - z_.avail_in;
    s.produced = room - z_.avail_out;
    if (result == Z_STREAM_END) {
      s.member_done = true;
    } else if (result != Z_OK && result != Z_BUF_ERROR) {  // Z_BUF_ERROR: wants more input
      throw InputError(
          label + ": corrupt gzip data (" +
          (z_.msg != nullptr ? std::string(z_.msg) : "zlib error " + std::to_string(result)) + ")" +
          kDamagedAdvice);
    }
    return s;
  }

 private:
  z_stream z_{};
  bool initialised_ = false;
};

#endif

}  // namespace

struct GzipStream::Impl {
  Impl(ByteStream& source, std::string name) : in(source), label(std::move(name)) {
    input.resize(kInputChunk);
    data = input.data();
    decoder.start();
  }

  // More input after what is left; false at the end. With nothing left, a
  // stream over memory (a mapped archive) lends its next bytes, decoded
  // where they lie instead of copied from the page cache first.
  bool refill() {
    if (eof) return false;
    if (begin == end) {
      const std::string_view lent = in.lend(input.size());
      if (!lent.empty()) {
        // Valid until the next call on `in`, which is the next refill: by
        // then what is left of it has been copied below.
        data = reinterpret_cast<const unsigned char*>(lent.data());
        begin = 0;
        end = lent.size();
        return true;
      }
    }
    // What is left moves to the front of the buffer, then a read after it.
    std::memmove(input.data(), data + begin, end - begin);
    data = input.data();
    end -= begin;
    begin = 0;
    const std::size_t n = in.read(input.data() + end, input.size() - end);
    if (n == 0) eof = true;
    end += n;
    return n > 0;
  }

  [[noreturn]] void cut_short() const {
    throw InputError(label + ": the gzip stream is cut short (the layer is truncated)" +
                     kDamagedAdvice);
  }

  // After a member: another one, or the end of the stream.
  bool next_member() {
    while (end - begin < 2 && refill()) {
    }
    if (end - begin >= 2 && data[begin] == 0x1f && data[begin + 1] == 0x8b) {
      decoder.start();
      return true;
    }
    return false;
  }

  std::size_t read(unsigned char* out, std::size_t size) {
    while (!done) {
      if (member_done) {
        member_done = false;
        if (!next_member()) done = true;
        continue;
      }
      if (begin == end && !refill()) cut_short();
      const Step s = decoder.step(data + begin, end - begin, out, size, label);
      begin += s.consumed;
      member_done = s.member_done;
      if (s.produced > 0) return s.produced;
      if (s.consumed == 0 && !s.member_done) {
        // What is here does not complete a step: more input, unless a whole
        // buffer of it already made no progress.
        if (end - begin == input.size())
          throw InputError(label + ": corrupt gzip data (the decoder made no progress)" +
                           kDamagedAdvice);
        if (!refill()) cut_short();
      }
    }
    return 0;
  }

  ByteStream& in;
  std::string label;
  Decoder decoder;
  std::vector<unsigned char> input;
  const unsigned char* data = nullptr;  // the buffer, or bytes `in` lent
  std::size_t begin = 0, end = 0;       // the unconsumed input, in `data`
  bool eof = false;
  bool member_done = false;
  bool done = false;
};

GzipStream::GzipStream(ByteStream& in, std::string label)
    : impl_(std::make_unique<Impl>(in, std::move(label))) {}
GzipStream::~GzipStream() = default;

std::size_t GzipStream::read(void* buf, std::size_t size) {
  return impl_->read(static_cast<unsigned char*>(buf), size);
}

}  // namespace detail
}  // namespace imgsmith
