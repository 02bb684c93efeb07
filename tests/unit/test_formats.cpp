// Every container layout imgsmith reads, built by the tests, must give the
// same figures for the same image.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>

#include "image_builder.hpp"
#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/analysis/merged_tree.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/util/error.hpp"
#include "same_figures.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

// 3 layers: a base with a hard link and a cache, a layer deleting the cache
// and adding the app, a layer overwriting the library.
Image sample_image(Encoding encoding = Encoding::None) {
  Image image;
  image.layers = {
      Layer{{dir("usr"), file("usr/lib.so", 3000), file("usr/tool", 500),
             hardlink("usr/tool2", "usr/tool"), dir("tmp"), file("tmp/cache", 800)},
            encoding,
            true,
            "ADD rootfs.tar /"},
      Layer{{dir("tmp"), whiteout("tmp/cache"), dir("app"), file("app/main.py", 120)},
            encoding,
            true,
            "COPY . /app"},
      Layer{{dir("usr"), file("usr/lib.so", 3100)}, encoding, true, "RUN upgrade"},
  };
  image.empty_history = {{1, "ENV A=1"}, {3, "CMD [\"python\"]"}};
  return image;
}

void check_sample(const Analysis& a) {
  CHECK(a.layers.size() == 3);
  CHECK(a.layers_bytes == 7520);
  CHECK(a.final_bytes == 3720);
  CHECK(a.wasted_bytes == 3800);
  CHECK(a.layers[0].size_bytes == 4300);
  CHECK(a.layers[0].entries == 6);
  CHECK(a.layers[1].created_by == "COPY . /app");
  CHECK(a.layers[2].created_by == "RUN upgrade");
  CHECK(a.tags.size() == 1);
  CHECK(a.os == "linux");
  CHECK(a.architecture == "amd64");
  CHECK(a.config_digest.rfind("sha256:", 0) == 0);
  for (const auto& l : a.layers) CHECK(l.diff_id.rfind("sha256:", 0) == 0);
  REQUIRE(a.largest_files.size() == 3);
  CHECK(a.largest_files[0].path == "/usr/lib.so");
  CHECK(a.largest_files[0].layer == 2);
  CHECK(a.largest_files[1].path == "/usr/tool");
  CHECK(a.largest_files[1].hard_links == 1);
}

Analysis analyze_file(const std::string& path, AnalyzeOptions options = {}) {
  return analyze_image(path, options);
}

// Every visible path of the final tree, with the size of its content and
// the layer that wrote it, in the order a walk meets them.
std::vector<std::string> final_tree(const Analysis& a) {
  std::vector<std::string> out;
  const std::function<void(const FileNode&)> walk = [&](const FileNode& node) {
    for (const FileNode* child : node.children()) {
      const std::int32_t content = child->inode();  // a file's, or a hard link's target's
      const std::uint64_t size =
          content < 0 ? 0 : a.tree->inodes()[static_cast<std::size_t>(content)].size;
      out.push_back(child->path() + " " + std::to_string(size) + " " +
                    std::to_string(child->layer));
      walk(*child);
    }
  };
  if (a.tree) walk(a.tree->root());
  return out;
}

Image repeated_layer_image(Encoding encoding) {
  Image image;
  const Layer a{{file("x", 10)}, encoding, true, "RUN a"};
  const Layer b{{file("y", 5)}, encoding, true, "RUN b"};
  image.layers = {a, b, a};
  return image;
}

}  // namespace

TEST_CASE("test images: a gzip layer's bytes do not depend on the clock") {
  // The saves name blobs by digest and compute it more than once; a gzip
  // header stamped with the time of writing would make them disagree.
  const std::string blob = layer_tar(Layer{{file("a", 100)}, Encoding::Gzip});
  REQUIRE(blob.size() > 8);
  CHECK(blob.substr(4, 4) == std::string(4, '\0'));  // MTIME field, RFC 1952
}

TEST_CASE("docker save legacy: manifest.json after the layers") {
  TempDir tmp;
  write_file(tmp / "save.tar", docker_legacy_save(sample_image()));
  const Analysis a = analyze_file(tmp / "save.tar");
  CHECK(a.format == "docker-save");
  CHECK(a.tags == std::vector<std::string>{"test/image:1"});
  CHECK_FALSE(a.compressed_bytes.has_value());
  check_sample(a);
  // The digest of a legacy layer is its diff_id.
  CHECK(a.layers[0].digest == a.layers[0].diff_id);
}

TEST_CASE("docker save legacy: a repeated layer stored as a symlink is read through it") {
  TempDir tmp;
  write_file(tmp / "save.tar", docker_legacy_save(repeated_layer_image(Encoding::None)));
  const Analysis a = analyze_file(tmp / "save.tar");
  REQUIRE(a.layers.size() == 3);
  CHECK(a.layers[2].size_bytes == 10);
  CHECK(a.layers_bytes == 25);
  CHECK(a.final_bytes == 15);
  CHECK(a.wasted_bytes == 10);
}

TEST_CASE("docker save from Docker 25: OCI layout plus manifest.json, stray blobs ignored") {
  TempDir tmp;
  write_file(tmp / "save.tar", docker25_save(sample_image()));
  const Analysis a = analyze_file(tmp / "save.tar");
  CHECK(a.format == "docker-save+oci");
  check_sample(a);
  CHECK(a.layers[0].digest == a.layers[0].diff_id);  // plain tars: digest is the diff_id
}

TEST_CASE("docker save from the containerd store: gzip blobs, sorted names, a digest twice") {
  TempDir tmp;
  write_file(tmp / "save.tar", containerd_save(repeated_layer_image(Encoding::Gzip)));
  const Analysis a = analyze_file(tmp / "save.tar");
  REQUIRE(a.layers.size() == 3);
  CHECK(a.layers[0].digest == a.layers[2].digest);
  CHECK(a.layers[0].digest != a.layers[0].diff_id);
  CHECK(a.layers_bytes == 25);
  CHECK(a.final_bytes == 15);
  REQUIRE(a.compressed_bytes.has_value());
  CHECK(*a.compressed_bytes == *a.layers[0].compressed_bytes * 2 + *a.layers[1].compressed_bytes);

  write_file(tmp / "sample.tar", containerd_save(sample_image(Encoding::Gzip)));
  check_sample(analyze_file(tmp / "sample.tar"));
}

TEST_CASE("OCI layout directory") {
  TempDir tmp;
  write_tree(tmp / "layout", oci_layout(sample_image(Encoding::Gzip)));
  const Analysis a = analyze_file(tmp / "layout");
  CHECK(a.format == "oci-layout");
  check_sample(a);
  REQUIRE(a.compressed_bytes.has_value());
}

TEST_CASE("OCI archive with zstd layers") {
  TempDir tmp;
  write_file(tmp / "oci.tar", tar_of(oci_layout(sample_image(Encoding::Zstd))));
  const Analysis a = analyze_file(tmp / "oci.tar");
  CHECK(a.format == "oci-archive");
  check_sample(a);
  for (const auto& l : a.layers) CHECK(l.compression == "zstd");
}

TEST_CASE("a whole save compressed with gzip or zstd is read as a stream") {
  TempDir tmp;
  write_file(tmp / "save.tar.gz", encode(docker_legacy_save(sample_image()), Encoding::Gzip));
  check_sample(analyze_file(tmp / "save.tar.gz"));
  // A name that says nothing: detection is by content.
  write_file(tmp / "image.bin",
             encode(containerd_save(sample_image(Encoding::Gzip)), Encoding::Zstd));
  const Analysis z = analyze_file(tmp / "image.bin");
  check_sample(z);
  CHECK(z.format == "docker-save+oci");
}

TEST_CASE("multi-platform index: linux/amd64 by default, --platform picks, attestations skipped") {
  Image amd = sample_image();
  Image arm;
  arm.architecture = "arm64";
  arm.layers = {Layer{{file("arm-only", 77)}}};
  TempDir tmp;
  write_file(tmp / "multi.tar", tar_of(oci_multi_platform({arm, amd})));

  const Analysis a = analyze_file(tmp / "multi.tar");
  CHECK(a.architecture == "amd64");
  check_sample(a);

  AnalyzeOptions options;
  options.selector.platform = Platform::parse("linux/arm64");
  const Analysis b = analyze_file(tmp / "multi.tar", options);
  CHECK(b.architecture == "arm64");
  CHECK(b.final_bytes == 77);

  options.selector.platform = Platform::parse("linux/s390x");
  CHECK_THROWS_WITH(analyze_file(tmp / "multi.tar", options),
                    Catch::Contains("linux/s390x") && Catch::Contains("linux/arm64") &&
                        Catch::Contains("linux/amd64") && !Catch::Contains("unknown"));
}

TEST_CASE("a single-platform image is analysed whatever its platform unless --platform insists") {
  Image arm;
  arm.architecture = "arm64";
  arm.layers = {Layer{{file("f", 3)}}};
  TempDir tmp;
  write_file(tmp / "save.tar", docker_legacy_save(arm));
  CHECK(analyze_file(tmp / "save.tar").architecture == "arm64");
  AnalyzeOptions options;
  options.selector.platform = Platform::parse("linux/amd64");
  CHECK_THROWS_WITH(analyze_file(tmp / "save.tar", options), Catch::Contains("linux/arm64"));
}

TEST_CASE("a layer without tar end blocks (umoci) gives a warning and full figures") {
  Image image = sample_image();
  image.layers[1].end_blocks = false;
  TempDir tmp;
  write_file(tmp / "oci.tar", tar_of(oci_layout(image)));
  const Analysis a = analyze_file(tmp / "oci.tar");
  check_sample(a);
  bool warned = false;
  for (const auto& w : a.warnings) warned = warned || w.find("end-of-archive") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("parallel and sequential layer reads give identical analyses") {
  // A first layer past the size where it is merged while it is read (beside
  // the other layers' scans), so the parallel read takes that path; later
  // layers delete, hide and rewrite what it added.
  Image image;
  Layer base{{dir("usr"), file("usr/big.bin", 3u << 20), file("usr/tool", 500),
              hardlink("usr/tool2", "usr/tool"), dir("data"), dir("cache")},
             Encoding::None,
             true,
             "ADD rootfs.tar /"};
  for (int i = 0; i < 2000; ++i) {
    base.entries.push_back(file("data/f" + std::to_string(i), 100 + i % 7));
    base.entries.push_back(file("cache/c" + std::to_string(i), 10));
  }
  image.layers = {
      base,
      Layer{{dir("data"), whiteout("data/f7"), file("data/f8", 5000), opaque("cache"),
             file("cache/new", 70)},
            Encoding::Gzip,
            true,
            "RUN change"},
      Layer{{dir("usr"), file("usr/big.bin", 1000), whiteout("usr/tool")},
            Encoding::Zstd,
            true,
            "RUN shrink"},
  };
  TempDir tmp;
  write_file(tmp / "oci.tar", tar_of(oci_layout(image)));
  AnalyzeOptions sequential, parallel;
  sequential.threads = 1;
  sequential.merge_while_reading_from = UINT64_MAX;
  parallel.threads = 8;
  const Analysis a = analyze_file(tmp / "oci.tar", sequential);
  const Analysis b = analyze_file(tmp / "oci.tar", parallel);
  REQUIRE(a.layers.size() == 3);
  REQUIRE(a.layers[0].size_bytes >= parallel.merge_while_reading_from);

  // Worked out by hand: the data files are 100..106 bytes in turn.
  std::uint64_t data = 0;
  for (int i = 0; i < 2000; ++i) data += 100 + i % 7;
  const std::uint64_t layer0 = (3u << 20) + 500 + data + 2000 * 10;
  const std::uint64_t final = 1000 + 500 + (data - (100 + 7 % 7) - (100 + 8 % 7) + 5000) + 70;
  for (const Analysis* x : {&a, &b}) {
    CHECK(x->layers[0].size_bytes == layer0);
    CHECK(x->layers_bytes == layer0 + 5070 + 1000);
    CHECK(x->final_bytes == final);
    CHECK(x->wasted_bytes == x->layers_bytes - final);
  }
  CHECK(a.final_entries == b.final_entries);
  CHECK(a.layer_entries == b.layer_entries);
  CHECK(a.dive.efficiency == b.dive.efficiency);
  check_same_dive_figures(a.dive, b.dive);
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    CHECK(a.layers[i].digest == b.layers[i].digest);
    CHECK(a.layers[i].size_bytes == b.layers[i].size_bytes);
    CHECK(a.layers[i].entries == b.layers[i].entries);
  }
  REQUIRE(a.largest_files.size() == b.largest_files.size());
  for (std::size_t i = 0; i < a.largest_files.size(); ++i) {
    CHECK(a.largest_files[i].path == b.largest_files[i].path);
    CHECK(a.largest_files[i].layer == b.largest_files[i].layer);
  }
  REQUIRE(a.waste.size() == b.waste.size());
  for (std::size_t i = 0; i < a.waste.size(); ++i) {
    CHECK(a.waste[i].path == b.waste[i].path);
    CHECK(a.waste[i].bytes == b.waste[i].bytes);
  }
  const auto tree = final_tree(a);
  CHECK(tree == final_tree(b));
  CHECK(std::count(tree.begin(), tree.end(), "/usr/tool2 500 0") == 1);  // kept by its link
  CHECK(std::count(tree.begin(), tree.end(), "/cache/new 70 1") == 1);
  CHECK(std::count(tree.begin(), tree.end(), "/cache/c1 10 0") == 0);
}

TEST_CASE("image selection picks an image by tag and names the tags when none matches") {
  TempDir tmp;
  write_file(tmp / "a.tar", docker_legacy_save(sample_image()));
  AnalyzeOptions options;
  options.selector.image = "nope:1";
  CHECK_THROWS_WITH(analyze_file(tmp / "a.tar", options), Catch::Contains("test/image:1"));
  options.selector.image = "test/image:1";
  check_sample(analyze_file(tmp / "a.tar", options));
}

TEST_CASE("file names are bytes: every odd name class and a 4,000-byte name read through pax") {
  TempDir tmp;
  write_file(tmp / "save.tar", docker25_save(odd_names_image()));
  const Analysis a = analyze_file(tmp / "save.tar");
  REQUIRE(a.tree != nullptr);
  REQUIRE(odd_names()[10].path.size() == 4000);
  for (std::size_t i = 1; i < odd_names().size(); ++i) {  // [0] is deleted by layer 1
    INFO(i);
    const FileNode* node = a.tree->find(odd_names()[i].path);
    REQUIRE(node != nullptr);
    CHECK(a.tree->file_size(*node) == (i == 4 ? 5000 : 1000 + 100 * i));
  }
  CHECK(a.tree->find(odd_names()[0].path) == nullptr);
  CHECK(a.layers[1].created_by.find("\x1b[2J\r") != std::string::npos);
}
