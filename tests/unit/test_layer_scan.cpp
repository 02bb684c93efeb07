#include <any>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>

#include "image_builder.hpp"
#include "imgsmith/source/layer_scan.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/sha256.hpp"
#include "scan_helpers.hpp"
#include "tar_header.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

LayerScan scan(const std::string& blob) {
  StringStream in(blob);
  return scan_layer(in, blob.size(), "test-layer");
}

}  // namespace

TEST_CASE("layer scan: a sink that takes the entries gets them all and the scan keeps none") {
  Layer layer;
  for (int i = 0; i < 10000; ++i) layer.entries.push_back(file("d/f" + std::to_string(i), i % 7));
  layer.entries.push_back(hardlink("d/link", "d/f1"));
  const std::string blob = layer_tar(layer);
  std::vector<std::string> seen;
  std::uint64_t bytes = 0;
  const EntrySink take(
      [&](std::span<const TarEntry> batch) {
        for (const TarEntry& e : batch) {
          seen.push_back(std::string(e.path) +
                         (e.link.empty() ? "" : " -> " + std::string(e.link)));
          bytes += e.size;
        }
      },
      true);
  StringStream in(blob);
  const LayerScan s = scan_layer(in, blob.size(), "test-layer", {}, {}, take);
  CHECK(s.entries.empty());
  CHECK(s.entries_taken == layer.entries.size());
  CHECK(s.entry_count() == layer.entries.size());
  CHECK(s.content_bytes == bytes);
  REQUIRE(seen.size() == layer.entries.size());
  CHECK(seen[0] == "d/f0");
  CHECK(seen[9999] == "d/f9999");
  CHECK(seen[10000] == "d/link -> d/f1");

  // A sink that only looks leaves the scan whole.
  std::size_t looked = 0;
  StringStream again(blob);
  const LayerScan kept =
      scan_layer(again, blob.size(), "test-layer", {}, {},
                 EntrySink([&](std::span<const TarEntry> batch) { looked += batch.size(); }));
  CHECK(looked == layer.entries.size());
  CHECK(kept.entries.size() == layer.entries.size());
  CHECK(kept.entries_taken == 0);
}

TEST_CASE("layer scan: records every entry with its type, size and link") {
  Layer layer{{dir("usr"), file("usr/a.bin", 1000), hardlink("usr/b.bin", "usr/a.bin"),
               soft_link("usr/c", "a.bin"), whiteout("usr/gone")}};
  const LayerScan s = scan(layer_tar(layer));
  REQUIRE(s.entries.size() == 5);
  CHECK(s.entries[0].path == "usr");
  CHECK(s.entries[0].type == EntryType::Dir);
  CHECK(s.entries[1].type == EntryType::File);
  CHECK(s.entries[1].size == 1000);
  CHECK(s.entries[2].type == EntryType::Hardlink);
  CHECK(s.entries[2].link == "usr/a.bin");
  CHECK(s.entries[2].size == 0);
  CHECK(s.entries[3].type == EntryType::Symlink);
  CHECK(s.entries[3].link == "a.bin");
  CHECK(s.entries[4].path == "usr/.wh.gone");
  CHECK(s.content_bytes == 1000);
  CHECK(s.compression == Compression::None);
  CHECK(s.warnings.empty());
}

TEST_CASE("layer scan: link targets past ustar's 100 bytes come from pax linkpath") {
  const std::string dir = "opt/" + std::string(120, 'd') + "/";
  const std::string target = dir + "libexample.so.1.2.3";
  Layer layer{{file(target, 4000), soft_link("usr/lib/libexample.so", "/" + target),
               hardlink("usr/lib/libexample.so.1", target)}};
  const LayerScan s = scan(layer_tar(layer));
  REQUIRE(s.entries.size() == 3);
  CHECK(s.entries[0].path == target);
  CHECK(s.entries[1].type == EntryType::Symlink);
  CHECK(s.entries[1].link == "/" + target);
  CHECK(s.entries[2].type == EntryType::Hardlink);
  CHECK(s.entries[2].link == target);
  CHECK(s.content_bytes == 4000);
}

TEST_CASE("layer scan: compression is judged by magic bytes") {
  Layer layer{{file("x", 5000)}};
  for (auto [enc, expected] :
       {std::pair{Encoding::Gzip, Compression::Gzip}, std::pair{Encoding::Zstd, Compression::Zstd},
        std::pair{Encoding::None, Compression::None}}) {
    layer.encoding = enc;
    const std::string blob = layer_tar(layer);
    const LayerScan s = scan(blob);
    CHECK(s.compression == expected);
    CHECK(s.content_bytes == 5000);
    CHECK(s.blob_bytes == blob.size());
  }
}

TEST_CASE("layer scan: paths are normalised") {
  CHECK(normalise_path("./usr//lib/") == "usr/lib");
  CHECK(normalise_path("/etc/passwd") == "etc/passwd");
  CHECK(normalise_path("./") == "");
  CHECK(normalise_path("a/./b/../c") == "a/c");
  CHECK(normalise_path("../../etc") == "etc");
}

TEST_CASE("layer scan: a layer without end-of-archive blocks is a warning, not a failure") {
  Layer layer{{file("a", 700), file("b", 10)}};
  layer.end_blocks = false;
  const LayerScan s = scan(layer_tar(layer));
  CHECK(s.entries.size() == 2);
  CHECK(s.content_bytes == 710);
  REQUIRE(s.warnings.size() == 1);
  CHECK_THAT(s.warnings[0], Catch::Contains("end-of-archive"));
}

TEST_CASE("layer scan: a layer cut inside an entry is an error naming the layer") {
  std::string blob = layer_tar(Layer{{file("a", 700), file("big", 4000)}});
  blob.resize(1024 + 512 + 1000);  // inside big's data
  CHECK_THROWS_WITH(scan(blob), Catch::Contains("test-layer") && Catch::Contains("big"));
}

TEST_CASE("layer scan: a corrupt gzip stream is an error") {
  std::string blob = layer_tar(Layer{{file("a", 70000, 'q')}, Encoding::Gzip});
  for (std::size_t i = 20; i < blob.size() - 8; i += 7) blob[i] = static_cast<char>(blob[i] ^ 0x5a);
  CHECK_THROWS_AS(scan(blob), InputError);
}

TEST_CASE("layer scan: file data is skipped by seeking, not read", "[slow]") {
  TempDir tmp;
  const std::string path = tmp / "layer.tar";
  write_file(
      path,
      layer_tar(Layer{{file("big1", 48u << 20), file("small", 10), file("big2", 48u << 20)}}));
  auto shared = std::make_shared<SharedFile>(path);
  FileRangeStream range(shared, 0, shared->size());
  const LayerScan s = scan_layer(range, shared->size(), path);
  CHECK(s.content_bytes == (96u << 20) + 10);
  CHECK(shared->bytes_read() < (1u << 20));
}

TEST_CASE("layer scan: a path nested absurdly deep is refused, not recursed into") {
  std::string deep;
  for (int i = 0; i < 1500; ++i) deep += "d/";
  deep += "f";
  CHECK_THROWS_WITH(scan(layer_tar(Layer{{file(deep, 1)}})),
                    Catch::Contains("deeper than the depth limit of 1,000"));
}

TEST_CASE("layer scan: a captured file whose header claims more than the layer holds") {
  // Found by fuzz_tar_scan (an out-of-memory): a package database's header
  // claims 2^62 bytes (GNU base-256) and the layer ends after a few. The
  // claim must not be allocated up front: the scan ends in InputError.
  char size[12] = {};
  size[0] = static_cast<char>(0x80);  // base-256: the 11 bytes after hold the size
  size[4] = 0x40;                     // 2^62
  testing::StringStream in(testing::tar_header("var/lib/dpkg/status", size) +
                           std::string(4096, 'x'));
  const CaptureFn whole = [](std::string_view, std::uint64_t) { return kCaptureAll; };
  CHECK_THROWS_AS(scan_layer(in, 0, "claims-too-much", whole), InputError);
}

TEST_CASE("layer scan: bytes read in place (a mapped file) give the same scan as bytes copied") {
  Layer layer;
  for (int i = 0; i < 300; ++i)
    layer.entries.push_back(
        file("d/f" + std::to_string(i) + ".json", static_cast<std::size_t>(i * 37)));
  // Names long enough for pax headers, and files larger than a lent piece.
  layer.entries.push_back(file_with(std::string(300, 'p') + "/long-named.json", "{\"a\": 1}"));
  layer.entries.push_back(soft_link("d/" + std::string(200, 'l'), std::string(180, 't')));
  layer.entries.push_back(file("big", 300'000, 'b'));
  layer.entries.push_back(hardlink("d/link", "d/f1.json"));
  const std::string blob = layer_tar(layer);
  const CaptureFn keep = [](std::string_view path, std::uint64_t size) -> std::uint64_t {
    return path.ends_with(".json") ? kCaptureAll : size > 100 ? 100 : 0;
  };
  const CaptureFn hash = [](std::string_view, std::uint64_t size) -> std::uint64_t {
    return size % 3 == 0 ? 1 : 0;
  };
  StringStream copied(blob);
  const LayerScan want = scan_layer(copied, blob.size(), "test-layer", keep, hash);
  REQUIRE(want.entries.size() == layer.entries.size());
  const auto same = [&](const LayerScan& got) {
    REQUIRE(got.entries.size() == want.entries.size());
    for (std::size_t i = 0; i < want.entries.size(); ++i) {
      CHECK(got.entries[i].path == want.entries[i].path);
      CHECK(got.entries[i].link == want.entries[i].link);
      CHECK(got.entries[i].size == want.entries[i].size);
    }
    REQUIRE(got.captured.size() == want.captured.size());
    for (std::size_t i = 0; i < want.captured.size(); ++i) {
      CHECK(got.captured[i].path == want.captured[i].path);
      CHECK(got.captured[i].content == want.captured[i].content);
    }
    CHECK(got.digests == want.digests);
    CHECK(got.content_bytes == want.content_bytes);
  };
  for (const std::size_t max_piece : {std::size_t{1}, std::size_t{700}, std::size_t{70'000}}) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      INFO("pieces up to " << max_piece << " bytes, seed " << seed);
      auto lent = random_pieces(blob, seed, max_piece, true);
      same(scan_layer(lent, blob.size(), "test-layer", keep, hash));
    }
  }
  // And from a real mapped file, whose lent pages leave the resident set
  // as the reader moves on.
  TempDir tmp;
  write_file(tmp / "layer.tar", blob);
  auto shared = std::make_shared<SharedFile>(tmp / "layer.tar");
  REQUIRE(shared->mapped() != nullptr);
  FileRangeStream range(shared, 0, shared->size());
  same(scan_layer(range, shared->size(), "test-layer", keep, hash));
  // A cut layer is still an error, not a read past the mapping.
  write_file(tmp / "cut.tar", blob.substr(0, blob.size() - 200'000));
  auto cut = std::make_shared<SharedFile>(tmp / "cut.tar");
  FileRangeStream cut_range(cut, 0, cut->size());
  CHECK_THROWS_WITH(scan_layer(cut_range, cut->size(), "cut-layer", keep, hash),
                    Catch::Contains("cut-layer") && Catch::Contains("big"));
}

TEST_CASE(
    "layer scan: an uncompressed layer in a file reads each entry at offsets, unless digested") {
  // What the kernel reader relies on: read_at's offsets count from the
  // entry's first byte, wherever the layer starts in its file (here after
  // 1,000 bytes of something else, as a layer inside a save), the reading
  // front to back stays where it was, and a file being digested is read
  // front to back only.
  const auto pattern = [](std::size_t n, unsigned salt) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + salt) % 251);
    return s;
  };
  const std::string a = pattern(5000, 1), b = pattern(9000, 2), c = pattern(3000, 3);
  Layer layer;
  layer.entries.push_back(file_with("a.bin", a));
  layer.entries.push_back(file_with("b.bin", b));
  layer.entries.push_back(file_with(std::string(200, 'n') + "/c.bin", c));  // a pax header
  const std::string blob = layer_tar(layer);
  const std::map<std::string, std::string> content = {
      {"a.bin", a}, {"b.bin", b}, {std::string(200, 'n') + "/c.bin", c}};
  struct Seen {
    bool reads_at = false, same = true;
    std::uint64_t position = 0;
  };
  const CaptureFn inspect(
      [](std::string_view path, std::uint64_t) -> std::uint64_t {
        return path.ends_with(".bin") ? 16 : 0;
      },
      [&](std::string_view path, std::uint64_t size, std::string_view,
          ForwardReader& rest) -> std::any {
        Seen seen;
        seen.reads_at = rest.reads_at();
        if (!seen.reads_at) return seen;
        const std::string& want = content.at(std::string(path));
        for (const std::uint64_t at : {std::uint64_t{0}, std::uint64_t{17}, size - 5}) {
          char got[8] = {};
          const std::size_t n = rest.read_at(at, got, sizeof got);
          seen.same = seen.same && n == std::min<std::uint64_t>(8, size - at) &&
                      std::string(got, n) == want.substr(at, n);
        }
        char past[4];
        seen.same = seen.same && rest.read_at(size, past, 4) == 0;
        seen.position = rest.position();
        return seen;
      });
  const CaptureFn hash_b = [](std::string_view path, std::uint64_t) -> std::uint64_t {
    return path == "b.bin" ? 1 : 0;
  };
  TempDir tmp;
  write_file(tmp / "save.tar", std::string(1000, 'x') + blob);
  auto shared = std::make_shared<SharedFile>(tmp / "save.tar");
  FileRangeStream range(shared, 1000, blob.size());
  const LayerScan got = scan_layer(range, blob.size(), "in-a-save", inspect, hash_b);
  REQUIRE(got.captured.size() == 3);
  for (const auto& file : got.captured) {
    INFO(file.path);
    const auto seen = std::any_cast<Seen>(file.inspected);
    CHECK(seen.reads_at == (file.path != "b.bin"));
    CHECK(seen.same);
    CHECK(seen.position == (seen.reads_at ? 16u : 0u));  // only the head went by
  }
  // b.bin was digested whole, front to back.
  Sha256 digest;
  digest.update(b.data(), b.size());
  REQUIRE(got.digests.size() == 1);
  CHECK(got.digests[0].second == digest.digest());
  // A stream that goes by once does not read at offsets.
  StringStream streamed(blob);
  for (const auto& file : scan_layer(streamed, blob.size(), "streamed", inspect).captured)
    CHECK_FALSE(std::any_cast<Seen>(file.inspected).reads_at);
  // A layer cut inside an entry: reading there is an error naming it.
  write_file(tmp / "cut.tar", blob.substr(0, 512 + 2000));
  auto cut = std::make_shared<SharedFile>(tmp / "cut.tar");
  FileRangeStream cut_range(cut, 0, cut->size());
  CHECK_THROWS_WITH(scan_layer(cut_range, cut->size(), "cut-layer", inspect),
                    Catch::Contains("cut-layer") && Catch::Contains("a.bin"));
}
