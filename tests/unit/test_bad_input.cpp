// Bad input gets one InputError naming the input and the problem.
#include <catch2/catch.hpp>
#include <filesystem>

#include "fixtures.hpp"
#include "image_builder.hpp"
#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/util/error.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;
using Catch::Contains;

namespace {

Image two_layers(Encoding encoding) {
  Image image;
  image.layers = {Layer{{file("a", 70000, 'a')}, encoding},
                  Layer{{file("b", 90000, 'b')}, encoding}};
  return image;
}

void analyze(const std::string& path) { (void)analyze_image(path, AnalyzeOptions{}); }

}  // namespace

TEST_CASE("bad input: a plain file tar is not an image") {
  const std::string path = fixture("not-an-image-rootfs.tar");
  CHECK_THROWS_AS(analyze(path), InputError);
  CHECK_THROWS_WITH(analyze(path), Contains(path) && Contains("not a container image"));
}

TEST_CASE("bad input: a file that does not exist") {
  CHECK_THROWS_WITH(analyze("/nonexistent/image.tar"),
                    Contains("/nonexistent/image.tar") && Contains("No such file"));
}

TEST_CASE("bad input: an empty file and a file of random bytes") {
  TempDir tmp;
  write_file(tmp / "empty.tar", "");
  CHECK_THROWS_WITH(analyze(tmp / "empty.tar"), Contains("empty.tar") && Contains("empty"));
  write_file(tmp / "noise.bin", std::string(5000, '\x7f'));
  CHECK_THROWS_WITH(analyze(tmp / "noise.bin"),
                    Contains("noise.bin") && Contains("not a container image"));
}

TEST_CASE("bad input: a directory that is not an OCI layout") {
  TempDir tmp;
  write_file(tmp / "somewhere/readme.txt", "hello");
  CHECK_THROWS_WITH(analyze(tmp / "somewhere"),
                    Contains("somewhere") && Contains("index.json") && Contains("manifest.json"));
}

TEST_CASE("bad input: a truncated outer tar names the file and says so") {
  TempDir tmp;
  std::string save = docker_legacy_save(two_layers(Encoding::None));
  save.resize(save.size() / 2);
  write_file(tmp / "cut.tar", save);
  CHECK_THROWS_WITH(analyze(tmp / "cut.tar"), Contains("cut.tar") && Contains("runcated"));
}

TEST_CASE("bad input: a truncated compressed save") {
  TempDir tmp;
  std::string save = encode(docker_legacy_save(two_layers(Encoding::None)), Encoding::Gzip);
  save.resize(save.size() * 2 / 3);
  write_file(tmp / "cut.tar.gz", save);
  CHECK_THROWS_WITH(analyze(tmp / "cut.tar.gz"), Contains("cut.tar.gz"));
}

TEST_CASE("bad input: a compressed save whose gzip trailer does not match its data") {
  TempDir tmp;
  const std::string save = encode(docker_legacy_save(two_layers(Encoding::None)), Encoding::Gzip);
  write_file(tmp / "good.tar.gz", save);
  CHECK_NOTHROW(analyze(tmp / "good.tar.gz"));
  for (const std::size_t from_end : {std::size_t{8}, std::size_t{4}}) {  // CRC-32, then length
    std::string bad = save;
    bad[bad.size() - from_end] = static_cast<char>(bad[bad.size() - from_end] ^ 1);
    write_file(tmp / "bad.tar.gz", bad);
    CHECK_THROWS_WITH(analyze(tmp / "bad.tar.gz"), Contains("bad.tar.gz") && Contains("gzip"));
  }
}

TEST_CASE("bad input: a layer blob missing from an OCI archive") {
  const Image image = two_layers(Encoding::Gzip);
  std::vector<Member> members = oci_layout(image);
  const std::string gone = "blobs/sha256/" + hex_of(sha256(layer_tar(image.layers[1])));
  std::erase_if(members, [&](const Member& m) { return m.path == gone; });
  TempDir tmp;
  write_file(tmp / "oci.tar", tar_of(members));
  CHECK_THROWS_WITH(analyze(tmp / "oci.tar"),
                    Contains("oci.tar") && Contains(gone) && Contains("missing"));
  write_tree(tmp / "layout", members);
  CHECK_THROWS_WITH(analyze(tmp / "layout"), Contains(gone) && Contains("missing"));
}

TEST_CASE("bad input: a corrupt gzip layer names the layer") {
  const Image image = two_layers(Encoding::Gzip);
  std::vector<Member> members = oci_layout(image);
  const std::string victim = "blobs/sha256/" + hex_of(sha256(layer_tar(image.layers[0])));
  for (auto& m : members)
    if (m.path == victim)
      for (std::size_t i = 30; i + 8 < m.data.size(); i += 5)
        m.data[i] = static_cast<char>(~m.data[i]);
  TempDir tmp;
  write_file(tmp / "oci.tar", tar_of(members));
  CHECK_THROWS_WITH(analyze(tmp / "oci.tar"), Contains("oci.tar") && Contains(victim));
}

TEST_CASE("bad input: a layer cut inside a tar header is truncated, not a short layer") {
  Image image;
  image.layers = {Layer{{file("a", 70000, 'a'), file("b", 7000, 'b')}, Encoding::None}};
  const std::string layer = layer_tar(image.layers[0]);
  const std::string blob = "0123/layer.tar";
  const std::size_t second_header = 512 + (70000 + 511) / 512 * 512;
  // A docker save, whose manifest gives no layer sizes: the tar reader
  // itself must tell a cut header from the end of the archive.
  const auto cut_at = [&](std::size_t size) {
    TempDir tmp;
    write_file(
        tmp / "save.tar",
        tar_of({{"manifest.json",
                 R"([{"Config":"config.json","RepoTags":["t:1"],"Layers":[")" + blob + R"("]}])"},
                {"config.json", image.config_bytes()},
                {blob, layer.substr(0, size)}}));
    (void)analyze_image(tmp / "save.tar", AnalyzeOptions{});
  };
  // 312 bytes of b's header: b would be lost without a word.
  CHECK_THROWS_WITH(cut_at(second_header + 312), Contains(blob) &&
                                                     Contains("truncated inside a tar header") &&
                                                     Contains("download the image again"));
  // Inside the zeros that end the archive: nothing is lost.
  const std::size_t end_of_b = second_header + 512 + (7000 + 511) / 512 * 512;
  REQUIRE(layer.size() >= end_of_b + 1024);
  CHECK_NOTHROW(cut_at(end_of_b + 700));
}

TEST_CASE("bad input: a manifest, config or layer that does not match its descriptor") {
  const Image image = two_layers(Encoding::None);
  const std::string config = "blobs/sha256/" + hex_of(sha256(image.config_bytes()));
  const std::string layer = "blobs/sha256/" + hex_of(sha256(layer_tar(image.layers[1])));
  std::string manifest;
  for (const auto& m : oci_layout(image))
    if (m.path.starts_with("blobs/") && m.data.find("\"layers\"") != std::string::npos)
      manifest = m.path;
  REQUIRE_FALSE(manifest.empty());
  const auto changed = [&](const std::string& victim, bool cut) {
    std::vector<Member> members = oci_layout(image);
    for (auto& m : members)
      if (m.path == victim) {
        if (cut)
          m.data.resize(m.data.size() - 512);
        else
          m.data[m.data.size() / 2] = static_cast<char>(m.data[m.data.size() / 2] ^ 0x20);
      }
    TempDir tmp;
    write_tree(tmp / "layout", members);
    (void)analyze_image(tmp / "layout", AnalyzeOptions{});
  };
  CHECK_NOTHROW(changed("none", false));
  // A changed byte in a document: its digest no longer holds.
  CHECK_THROWS_WITH(changed(manifest, false),
                    Contains(manifest) && Contains("does not match its digest"));
  CHECK_THROWS_WITH(changed(config, false),
                    Contains(config) && Contains("does not match its digest"));
  // A layer shorter than its descriptor says.
  CHECK_THROWS_WITH(changed(layer, true), Contains(layer) && Contains("the manifest says") &&
                                              Contains("download the image again"));
}

TEST_CASE("bad input: a manifest that is not JSON") {
  std::vector<Member> members = oci_layout(two_layers(Encoding::None));
  for (auto& m : members)
    if (m.path == "index.json") m.data = "{\"manifests\": [";
  TempDir tmp;
  write_file(tmp / "oci.tar", tar_of(members));
  CHECK_THROWS_WITH(analyze(tmp / "oci.tar"), Contains("index.json") && Contains("not valid JSON"));
}

TEST_CASE("bad input: a malformed --platform") {
  CHECK_THROWS_AS(Platform::parse("linux"), InputError);
  CHECK_THROWS_AS(Platform::parse("linux//v7"), InputError);
  CHECK(Platform::parse("linux/arm/v7").variant == "v7");
}
