// gzip layers, whichever inflater the build has (ISA-L, or zlib): members,
// chunk boundaries, and every kind of damage, the trailer's included (the
// tar ends before it, so only decoding to the end finds it).
#include <catch2/catch.hpp>
#include <random>

#include "imgsmith/util/error.hpp"
#include "scan_helpers.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;
using Catch::Contains;

namespace {

// Bytes that compress poorly, so the stream has many deflate blocks.
std::string noise(std::size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(random() & 0x3f);
  return s;
}

Layer sample_layer() {
  return Layer{{file_with("noise", noise(3'000'000, 1)), file("zeros", 5'000'000, '\0'), dir("etc"),
                file_with("etc/os-release", "ID=debian\n"), soft_link("lib", "usr/lib")}};
}

LayerScan scan_gzip(ByteStream& in) { return scan_layer(in, 0, "test-layer"); }
// Each test reads its blobs both ways: copied, and lent in place as from a
// mapped archive (the inflater then decodes the bytes where they lie).
bool lend_blobs = false;
void both_ways() { lend_blobs = GENERATE(false, true); }
LayerScan scan_gzip(const std::string& blob) {
  PieceStream in(
      blob, [] { return SIZE_MAX; }, lend_blobs);
  return scan_gzip(in);
}

void same_scan(const LayerScan& a, const LayerScan& b) {
  REQUIRE(a.entries.size() == b.entries.size());
  CHECK(a.content_bytes == b.content_bytes);
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    CHECK(a.entries[i].path == b.entries[i].path);
    CHECK(a.entries[i].size == b.entries[i].size);
  }
}

}  // namespace

TEST_CASE("gzip layers: read in pieces of any size, the same entries as the plain tar") {
  both_ways();
  CAPTURE(lend_blobs);
  INFO("inflater: " << gzip_inflater());
  const std::string tar = layer_tar(sample_layer());
  const LayerScan plain = scan_gzip(tar);
  const std::string gz = encode(tar, Encoding::Gzip);
  for (unsigned seed = 1; seed <= 3; ++seed) {
    auto in = random_pieces(gz, seed, 700, lend_blobs);
    const LayerScan s = scan_gzip(in);
    CHECK(s.compression == Compression::Gzip);
    same_scan(plain, s);
  }
}

TEST_CASE("gzip layers: a stream of several members (as estargz writes) is read whole") {
  both_ways();
  CAPTURE(lend_blobs);
  const std::string tar = layer_tar(sample_layer());
  std::string members;
  // Cut anywhere, even inside a header: members join into one byte stream.
  for (std::size_t at = 0, cut = 1000; at < tar.size(); at += cut, cut *= 7)
    members += encode(tar.substr(at, cut), Encoding::Gzip);
  same_scan(scan_gzip(tar), scan_gzip(members));
  auto in = random_pieces(members, 9, 700, lend_blobs);
  same_scan(scan_gzip(tar), scan_gzip(in));
  // An empty member between them changes nothing.
  same_scan(scan_gzip(tar), scan_gzip(encode("", Encoding::Gzip) + members));
}

TEST_CASE("gzip layers: members handed over a byte at a time, each byte read or lent") {
  both_ways();
  CAPTURE(lend_blobs);
  const std::string tar =
      layer_tar(Layer{{dir("etc"), file_with("etc/os-release", "ID=debian\n"),
                       file_with("noise", noise(5000, 3)), soft_link("lib", "usr/lib")}});
  std::string members;
  for (std::size_t at = 0; at < tar.size(); at += 1500)
    members += encode(tar.substr(at, 1500), Encoding::Gzip);
  // Every member's first byte comes alone, after the trailer before it:
  // the decoder has to keep it while more is read or lent.
  PieceStream in(
      members, [] { return 1; }, lend_blobs);
  same_scan(scan_gzip(tar), scan_gzip(in));
}

TEST_CASE("gzip layers: zeros after the last member end the stream, as gzip reads it") {
  both_ways();
  CAPTURE(lend_blobs);
  const std::string tar = layer_tar(sample_layer());
  same_scan(scan_gzip(tar), scan_gzip(encode(tar, Encoding::Gzip) + std::string(4096, '\0')));
}

TEST_CASE(
    "gzip layers: a wrong CRC-32, a wrong length, a cut stream and a bad header name the layer") {
  both_ways();
  CAPTURE(lend_blobs);
  const std::string gz = encode(layer_tar(sample_layer()), Encoding::Gzip);
  std::string bad_crc = gz;
  bad_crc[gz.size() - 8] = static_cast<char>(bad_crc[gz.size() - 8] ^ 1);
  CHECK_THROWS_WITH(scan_gzip(bad_crc), Contains("test-layer"));
  std::string bad_length = gz;
  bad_length[gz.size() - 4] = static_cast<char>(bad_length[gz.size() - 4] ^ 1);
  CHECK_THROWS_WITH(scan_gzip(bad_length), Contains("test-layer"));
  for (const std::size_t keep : {std::size_t{5}, std::size_t{20}, gz.size() / 2, gz.size() - 5}) {
    INFO("kept " << keep << " of " << gz.size() << " bytes");
    CHECK_THROWS_WITH(scan_gzip(gz.substr(0, keep)), Contains("test-layer"));
  }
  std::string bad_method = gz;
  bad_method[2] = 7;  // not deflate
  CHECK_THROWS_AS(scan_gzip(bad_method), InputError);
}
