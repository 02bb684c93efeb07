// The read-ahead stream that decodes a large layer on a second core: the
// same bytes in the same order whatever the block and read sizes, the
// inner stream's error where a direct reader would meet it, and a reader
// that stops early neither hangs nor reads the whole inner stream.
#include <catch2/catch.hpp>
#include <random>

#include "imgsmith/util/error.hpp"
#include "read_ahead_stream.hpp"
#include "scan_helpers.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;
using imgsmith::detail::ReadAheadStream;

namespace {

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(random());
  return s;
}

// Hands out `text` in pieces of random size, then throws InputError when
// `fail` is set; counts what it gave.
class InnerStream : public ByteStream {
 public:
  InnerStream(std::string text, unsigned seed, bool fail)
      : text_(std::move(text)), pieces_(random_pieces(text_, seed, 5000, false)), fail_(fail) {}
  std::size_t read(void* buf, std::size_t size) override {
    const std::size_t n = pieces_.read(buf, size);
    if (n == 0 && fail_) throw InputError("inner: corrupt stream after " + std::to_string(given()));
    return n;
  }
  std::size_t given() const { return pieces_.position(); }

 private:
  std::string text_;
  PieceStream pieces_;
  bool fail_;
};

// Reads `in` to its end in pieces of random size.
std::string read_all(ByteStream& in, unsigned seed) {
  std::mt19937 random(seed);
  std::string out;
  std::vector<char> buf(70000);
  for (;;) {
    const std::size_t want = std::uniform_int_distribution<std::size_t>(1, buf.size())(random);
    const std::size_t n = in.read(buf.data(), want);
    if (n == 0) break;
    REQUIRE(n <= want);
    out.append(buf.data(), n);
  }
  return out;
}

}  // namespace

TEST_CASE("read-ahead: the inner stream's bytes in order, whatever the block and read sizes") {
  // (size, block): blocks smaller and larger than the stream and than a read.
  const auto [size, block] = GENERATE(table<std::size_t, std::size_t>({{0, 4096},
                                                                       {1, 1},
                                                                       {1, 4096},
                                                                       {4096, 1},
                                                                       {4096, 4096},
                                                                       {100'001, 7},
                                                                       {100'001, 4096},
                                                                       {3'000'001, 65536},
                                                                       {3'000'001, 1 << 20}}));
  CAPTURE(size, block);
  const std::string text = random_bytes(size, 7);
  InnerStream inner(text, 3, false);
  ReadAheadStream ahead(inner, block, 3);
  CHECK(read_all(ahead, 11) == text);
  // At the end it stays at the end.
  char c = 0;
  CHECK(ahead.read(&c, 1) == 0);
  CHECK(ahead.read(&c, 1) == 0);
}

TEST_CASE("read-ahead: the inner stream's error comes after every byte read before it") {
  const std::string text = random_bytes(2'500'000, 5);
  InnerStream inner(text, 9, true);
  ReadAheadStream ahead(inner, 65536, 4);
  std::string got;
  std::vector<char> buf(30000);
  std::string error;
  try {
    for (;;) {
      const std::size_t n = ahead.read(buf.data(), buf.size());
      if (n == 0) break;
      got.append(buf.data(), n);
    }
  } catch (const InputError& e) {
    error = e.what();
  }
  CHECK(got == text);
  CHECK(error == "inner: corrupt stream after 2500000");
  // And again on the next read, as a stream that failed keeps failing.
  CHECK_THROWS_AS(ahead.read(buf.data(), 1), InputError);
}

TEST_CASE(
    "read-ahead: a reader that stops early is not kept waiting, nor is the inner stream read "
    "to its end") {
  const std::string text = random_bytes(8'000'000, 2);
  InnerStream inner(text, 4, false);
  {
    ReadAheadStream ahead(inner, 65536, 4);
    char buf[100];
    std::size_t got = 0;
    while (got < sizeof buf) got += ahead.read(buf + got, sizeof buf - got);
    CHECK(std::string(buf, sizeof buf) == text.substr(0, sizeof buf));
  }  // the destructor stops the reading thread
  // At most the blocks of the ring and the one being filled were read.
  CHECK(inner.given() <= 5 * 65536);
}
