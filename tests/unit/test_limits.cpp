// Bombs and limits: hostile images get one InputError naming the input, the
// cap and the flag that raises it, or a bounded, exact result; never an
// exhausted machine.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "fixtures.hpp"
#include "image_builder.hpp"
#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/source/limits.hpp"
#include "imgsmith/util/error.hpp"
#include "tar_header.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// The process's limits, restored when the test ends.
struct LimitsGuard {
  InputLimits saved = input_limits();
  ~LimitsGuard() { set_input_limits(saved); }
};

Analysis analyze_path(const std::string& path) { return analyze_image(path, AnalyzeOptions{}); }

Image one_layer(std::vector<Entry> entries, Encoding encoding = Encoding::None) {
  Image image;
  image.layers = {Layer{std::move(entries), encoding}};
  return image;
}

// The blob path of the image's config in an OCI layout.
std::string config_blob(const std::vector<Member>& members) {
  std::string index, manifest;
  for (const auto& m : members)
    if (m.path == "index.json") index = m.data;
  const std::string manifest_path =
      "blobs/sha256/" +
      hex_of(nlohmann::json::parse(index)["manifests"][0]["digest"].get<std::string>());
  for (const auto& m : members)
    if (m.path == manifest_path) manifest = m.data;
  return "blobs/sha256/" +
         hex_of(nlohmann::json::parse(manifest)["config"]["digest"].get<std::string>());
}

constexpr std::uint64_t kGiB = 1ull << 30;

}  // namespace

TEST_CASE("limits: a 1 GiB config is refused by its size, before it is read") {
  TempDir tmp;
  std::vector<Member> members = oci_layout(one_layer({file("a", 10)}));
  const std::string config = config_blob(members);
  // A directory: the config made sparse, 1 GiB long.
  write_tree(tmp / "layout", members);
  fs::resize_file(tmp / ("layout/" + config), kGiB);
  CHECK_THROWS_WITH(analyze_path(tmp / "layout"),
                    Contains(config) && Contains("1,073,741,824 bytes") &&
                        Contains("the config limit of 8,388,608 bytes") &&
                        Contains("--limit config=SIZE"));
  // A tar whose last member is that config: the header says 1 GiB, the
  // bytes are a hole.
  std::erase_if(members, [&](const Member& m) { return m.path == config; });
  std::string tar = tar_of(members);
  tar.resize(tar.size() - 1024);  // its end blocks come after the big member
  tar += tar_header(config, "10000000000");
  write_file(tmp / "big.tar", tar);
  fs::resize_file(tmp / "big.tar", tar.size() + kGiB + 1024);
  CHECK_THROWS_WITH(analyze_path(tmp / "big.tar"), Contains("big.tar") &&
                                                       Contains("1,073,741,824 bytes") &&
                                                       Contains("--limit config=SIZE"));
}

TEST_CASE("limits: a 1 GiB manifest is refused, and a raised limit lets a large config through") {
  TempDir tmp;
  std::vector<Member> members = oci_layout(one_layer({file("a", 10)}));
  write_tree(tmp / "layout", members);
  fs::resize_file(tmp / "layout/index.json", kGiB);
  CHECK_THROWS_WITH(analyze_path(tmp / "layout"),
                    Contains("index.json") && Contains("the manifest limit of 4,194,304 bytes") &&
                        Contains("--limit manifest=SIZE"));

  // A real config of 9 MiB (a long history): over the default, fine when
  // the limit is raised.
  Image image = one_layer({file("a", 10)});
  for (int i = 0; i < 9 * 1024; ++i) image.empty_history.emplace_back(0, std::string(1000, 'h'));
  write_file(tmp / "history.tar", docker_legacy_save(image));
  CHECK_THROWS_WITH(analyze_path(tmp / "history.tar"), Contains("--limit config=SIZE"));
  LimitsGuard guard;
  InputLimits raised;
  apply_limit(raised, "config=16MiB");
  set_input_limits(raised);
  CHECK(analyze_path(tmp / "history.tar").final_bytes == 10);
}

TEST_CASE("limits: a layer listed 10,000 times is refused before any is read") {
  const Image image = one_layer({file("a", 10)});
  TempDir tmp;
  // docker save's manifest.json.
  std::vector<Member> save;
  {
    const std::string layer = layer_tar(image.layers[0]);
    const std::string config = image.config_bytes();
    nlohmann::json layers = nlohmann::json::array();
    for (int i = 0; i < 10000; ++i) layers.push_back("layer/layer.tar");
    const nlohmann::json manifest = nlohmann::json::array(
        {{{"Config", "config.json"}, {"RepoTags", {"x:1"}}, {"Layers", layers}}});
    save = {
        {"manifest.json", manifest.dump()}, {"config.json", config}, {"layer/layer.tar", layer}};
  }
  write_file(tmp / "save.tar", tar_of(save));
  CHECK_THROWS_WITH(analyze_path(tmp / "save.tar"), Contains("save.tar") &&
                                                        Contains("lists 10,000 layers") &&
                                                        Contains("--limit layers=N"));
  // An OCI manifest.
  std::vector<Member> members = oci_layout(image);
  for (auto& m : members) {
    if (!m.data.starts_with("{")) continue;
    nlohmann::json manifest = nlohmann::json::parse(m.data);
    if (!manifest.contains("layers")) continue;
    const nlohmann::json one = manifest["layers"][0];
    for (int i = 1; i < 10000; ++i) manifest["layers"].push_back(one);
    m.data = manifest.dump();
    const std::string digest = sha256(m.data);
    for (auto& other : members)
      if (other.path == "index.json") {
        nlohmann::json index = nlohmann::json::parse(other.data);
        index["manifests"][0]["digest"] = digest;
        index["manifests"][0]["size"] = m.data.size();
        other.data = index.dump();
      }
    m.path = "blobs/sha256/" + hex_of(digest);
  }
  write_tree(tmp / "layout", members);
  CHECK_THROWS_WITH(analyze_path(tmp / "layout"),
                    Contains("lists 10,000 layers") && Contains("the layers limit of 1,000"));
}

TEST_CASE("limits: entries past the limit are refused, and up to it they are counted exactly") {
  std::vector<Entry> entries;
  for (int i = 0; i < 3000; ++i) entries.push_back(file("d/e" + std::to_string(i), 0));
  TempDir tmp;
  write_file(tmp / "many.tar", docker_legacy_save(one_layer(entries, Encoding::Gzip)));
  const Analysis all = analyze_path(tmp / "many.tar");
  CHECK(all.layers.at(0).entries == 3000);
  LimitsGuard guard;
  InputLimits low;
  low.entries = 2999;
  set_input_limits(low);
  CHECK_THROWS_WITH(analyze_path(tmp / "many.tar"), Contains("many.tar") &&
                                                        Contains("more than 2,999 entries") &&
                                                        Contains("--limit entries=N"));
  low.entries = 3000;
  set_input_limits(low);
  CHECK(analyze_path(tmp / "many.tar").layers.at(0).entries == 3000);
}

TEST_CASE(
    "limits: a path of 4,096 bytes is read, one byte more is refused, and 1,000 levels deep is "
    "read") {
  std::string deep;
  for (int i = 0; i < 1000; ++i) deep += "d/";
  deep += "f";  // 1,000 directories above the file
  std::string longest = std::string(4090, 'p') + "/file";
  longest.resize(4096, 'q');
  TempDir tmp;
  write_file(tmp / "ok.tar", docker_legacy_save(one_layer({file(deep, 3), file(longest, 5)})));
  const Analysis a = analyze_path(tmp / "ok.tar");
  CHECK(a.final_bytes == 8);
  write_file(tmp / "long.tar", docker_legacy_save(one_layer({file(longest + "x", 5)})));
  CHECK_THROWS_WITH(analyze_path(tmp / "long.tar"),
                    Contains("long.tar") && Contains("a path of 4,097 bytes") &&
                        Contains("the path limit of 4,096 bytes") && Contains("--limit path=SIZE"));
  write_file(tmp / "deeper.tar", docker_legacy_save(one_layer({file("d/" + deep, 3)})));
  CHECK_THROWS_WITH(analyze_path(tmp / "deeper.tar"), Contains("--limit depth=N"));
}

TEST_CASE("bombs: link loops and a hard link to nothing give a bounded, exact result") {
  TempDir tmp;
  Image image;
  image.layers = {
      Layer{{file("data", 100), soft_link("loop/a", "b"), soft_link("loop/b", "a"),
             soft_link("self", "self"), soft_link("up", "../../../../.."),
             hardlink("ghost", "nothing"), hardlink("h1", "h2"), hardlink("h2", "h1")}},
      Layer{{hardlink("h3", "h3"), hardlink("late", "data"), soft_link("loop/c", "../loop/c")}}};
  write_file(tmp / "loops.tar", docker_legacy_save(image));
  const Analysis a = analyze_path(tmp / "loops.tar");
  // The only content is data's 100 bytes; links hold none, whatever they
  // point at.
  CHECK(a.final_bytes == 100);
  CHECK(a.layers.at(0).entries == 8);  // loop/ is implied, not an entry
  CHECK(a.layers.at(1).entries == 3);
}

TEST_CASE("bombs: a gzip layer that inflates 1,000 times is streamed, its size exact", "[slow]") {
  // 64 MiB of zeros in a layer of about 64 KiB.
  const std::uint64_t size = 64ull << 20;
  TempDir tmp;
  const Image image = one_layer({file("zeros", size, '\0')}, Encoding::Gzip);
  const std::string save = docker_legacy_save(image);
  CHECK(save.size() * 500 < size);
  write_file(tmp / "bomb.tar", save);
  const Analysis a = analyze_path(tmp / "bomb.tar");
  CHECK(a.final_bytes == size);
  CHECK(a.layers.at(0).size_bytes == size);
}

TEST_CASE("bombs: a zstd frame claiming a window of 2 GiB or more is refused, naming the layer") {
  // A hand-made frame: no content size, window descriptor (exponent << 3),
  // one raw block holding the layer's tar.
  const std::string tar = layer_tar(Layer{{file("a", 10)}});
  for (const unsigned char window : {0xa8, 0xf8}) {  // 2^31 and 2^41 bytes
    std::string frame("\x28\xb5\x2f\xfd", 4);
    frame += '\0';  // frame header descriptor: nothing optional
    frame += static_cast<char>(window);
    const std::uint32_t block = 1u | (static_cast<std::uint32_t>(tar.size()) << 3);  // last, raw
    frame += static_cast<char>(block & 0xff);
    frame += static_cast<char>((block >> 8) & 0xff);
    frame += static_cast<char>((block >> 16) & 0xff);
    frame += tar;
    const std::string digest = sha256(frame);
    Image image = one_layer({file("a", 10)});
    nlohmann::json config = image.config();
    config["rootfs"]["diff_ids"] = {sha256(tar)};
    const nlohmann::json manifest = nlohmann::json::array(
        {{{"Config", "config.json"}, {"RepoTags", {"x:1"}}, {"Layers", {"layer.tar.zst"}}}});
    TempDir tmp;
    write_file(tmp / "zstd.tar", tar_of({{"manifest.json", manifest.dump()},
                                         {"config.json", config.dump()},
                                         {"layer.tar.zst", frame}}));
    CHECK_THROWS_WITH(analyze_path(tmp / "zstd.tar"),
                      Contains("zstd.tar") && Contains("layer.tar.zst"));
  }
}

TEST_CASE("limits: --limit takes each name with a size or a count, and refuses anything else") {
  InputLimits l;
  apply_limit(l, "manifest=8MiB");
  apply_limit(l, "layers=20");
  apply_limit(l, "path=8192");
  CHECK(l.manifest_bytes == 8ull << 20);
  CHECK(l.layers == 20);
  CHECK(l.path_bytes == 8192);
  CHECK_THROWS_WITH(apply_limit(l, "size=1"), Contains("manifest, config, layers, entries"));
  CHECK_THROWS_WITH(apply_limit(l, "layers"), Contains("NAME=VALUE"));
  CHECK_THROWS_WITH(apply_limit(l, "layers=1k"), Contains("whole number"));
  CHECK_THROWS_WITH(apply_limit(l, "config=0"), Contains("above 0"));
  CHECK_THROWS_WITH(apply_limit(l, "config=lots"), Contains("a size"));
}
