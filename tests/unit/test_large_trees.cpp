// The merge, dive's figures and attribution at the sizes where their fast
// paths start: a first layer merged piece by piece while it is read, the
// tree's index through thousands of removals, layers in any entry order,
// and attribution split over threads.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <memory_resource>

#include "imgsmith/analysis/merged_tree.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/util/bulk_memory.hpp"
#include "same_figures.hpp"
#include "scan_helpers.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

// Every visible path in tree order, with its type and size.
std::vector<std::string> listing(const MergedTree& tree) {
  std::vector<std::string> out;
  std::function<void(const FileNode&)> walk = [&](const FileNode& node) {
    for (const FileNode* child : node.children()) {
      out.push_back(child->path() + " " + std::to_string(static_cast<int>(child->type)) + " " +
                    std::to_string(tree.file_size(*child)));
      walk(*child);
    }
  };
  walk(tree.root());
  return out;
}

std::vector<std::string> waste_rows(const MergedTree& tree) {
  std::vector<std::string> out;
  for (const auto& w : tree.waste())
    out.push_back(w.path + " " + hidden_by_name(w.how) + " " + std::to_string(w.bytes) + " " +
                  std::to_string(w.files));
  std::sort(out.begin(), out.end());
  return out;
}

// A first layer with what can surprise a merge: a path written twice, a hard
// link, nested directories given before and after their contents, and a
// whiteout and an opaque marker that have nothing below them to hide.
Layer tricky_first_layer() {
  return Layer{{dir("etc"), file("etc/a", 10), file("etc/a", 20), file("usr/lib/deep/x.so", 300),
                dir("usr/lib"), hardlink("usr/lib/y.so", "usr/lib/deep/x.so"), whiteout("etc/b"),
                opaque("usr"), file("etc/b", 5), dir("var"), file("var/log", 7)}};
}

Layer second_layer() {
  return Layer{{whiteout("etc/a"), opaque("usr/lib/deep"), file("var/log", 9), file("opt/new", 4)}};
}

}  // namespace

TEST_CASE("merge: a first layer merged in pieces as it is read equals merging it whole") {
  const LayerScan first = scanned(tricky_first_layer());
  const LayerScan second = scanned(second_layer());

  MergedTree whole;
  whole.apply(first, 0);
  whole.apply(second, 1);

  MergedTree pieces;
  for (std::size_t i = 0; i < first.entries.size(); ++i)
    pieces.add_first_layer(std::span<const TarEntry>(first.entries).subspan(i, 1));
  pieces.apply(second, 1);

  CHECK(listing(pieces) == listing(whole));
  CHECK(waste_rows(pieces) == waste_rows(whole));
  CHECK(pieces.visible_bytes() == whole.visible_bytes());
  CHECK(pieces.node_count() == whole.node_count());
  CHECK(pieces.find("etc/.wh.b") == nullptr);  // the marker itself is no file
  CHECK(pieces.find("etc/b") != nullptr);
}

TEST_CASE("analysis: the rest of a first layer begun during the scan gives the same figures") {
  const auto [image, scans] = scanned_stack({tricky_first_layer(), second_layer()});
  const Analysis plain = analyze_layers(image, scans, 50);
  for (const std::size_t begun : {std::size_t{1}, std::size_t{4}, scans[0]->entries.size()}) {
    PartialMerge started{std::make_shared<MergedTree>(), begun};
    started.tree->add_first_layer(std::span<const TarEntry>(scans[0]->entries).subspan(0, begun));
    const Analysis resumed = analyze_layers(image, scans, 50, started);
    INFO("entries merged during the scan: " << begun);
    CHECK(resumed.final_bytes == plain.final_bytes);
    CHECK(resumed.wasted_bytes == plain.wasted_bytes);
    CHECK(resumed.final_entries == plain.final_entries);
    CHECK(resumed.dive.efficiency == plain.dive.efficiency);
    CHECK(resumed.dive.wasted_bytes == plain.dive.wasted_bytes);
    CHECK(listing(*resumed.tree) == listing(*plain.tree));
  }
}

TEST_CASE("merge: thousands of deletions and re-creations keep every lookup right") {
  constexpr int kFiles = 5000;
  Layer base, recreate, overwrite;
  base.entries.push_back(dir("d"));
  recreate.entries.push_back(dir("d"));
  for (int i = 0; i < kFiles; ++i) {
    const std::string name = "d/sub" + std::to_string(i % 7) + "/f" + std::to_string(i);
    base.entries.push_back(file(name, 3));
    recreate.entries.push_back(file(name, 5));
    if (i % 2 == 0) overwrite.entries.push_back(file(name, 11));
  }
  MergedTree tree;
  tree.apply(scanned(base), 0);
  tree.apply(scanned(Layer{{whiteout("d")}}), 1);
  CHECK(tree.find("d") == nullptr);
  CHECK(tree.find("d/sub0/f0") == nullptr);
  tree.apply(scanned(recreate), 2);
  tree.apply(scanned(overwrite), 3);

  std::uint64_t expected = 0;
  for (int i = 0; i < kFiles; ++i) {
    const std::string name = "d/sub" + std::to_string(i % 7) + "/f" + std::to_string(i);
    const FileNode* node = tree.find(name);
    REQUIRE(node != nullptr);
    const std::uint64_t size = i % 2 == 0 ? 11 : 5;
    CHECK(tree.file_size(*node) == size);
    expected += size;
  }
  CHECK(tree.visible_bytes() == expected);
  CHECK(tree.node_count() == 1 + 7 + kFiles);  // d, its seven subdirectories, the files
  const WasteGroup* deleted = nullptr;
  for (const auto& w : tree.waste())
    if (w.path == "/d") deleted = &w;
  REQUIRE(deleted != nullptr);
  CHECK(deleted->bytes == 3u * kFiles);
}

TEST_CASE("dive: a layer's entries in any order give the same figures, worked out by hand") {
  // Layer 0 has a/x (100) and a/y (50); layer 1 writes a/x again (30);
  // layer 2 deletes a/y. dive sees a/x twice (130, smallest 30) and a/y
  // twice (50, then 0 for the whiteout of a file): efficiency 30/180.
  const std::vector<Layer> in_order{Layer{{dir("a"), file("a/x", 100), file("a/y", 50)}},
                                    Layer{{dir("a"), file("a/x", 30)}},
                                    Layer{{dir("a"), whiteout("a/y"), file("a/z", 0)}}};
  std::vector<Layer> reversed = in_order;
  for (auto& l : reversed) std::reverse(l.entries.begin(), l.entries.end());

  for (const auto& layers : {in_order, reversed}) {
    const Analysis a = analyze_stack(layers);
    CHECK(a.dive.efficiency == Approx(30.0 / 180.0));
    CHECK(a.dive.wasted_bytes == 180);
    REQUIRE(a.dive.inefficient.size() == 2);
    CHECK(a.dive.inefficient[0].path == "/a/x");
    CHECK(a.dive.inefficient[0].cumulative_bytes == 130);
    CHECK(a.dive.inefficient[1].path == "/a/y");
    CHECK(a.dive.inefficient[1].copies == 2);
  }
}

TEST_CASE("dive: a first layer recorded as it is read gives the figures of its whole scan") {
  // In path order, and not (tricky_first_layer repeats a path and lists a
  // directory after its contents), recorded from any point of the scan.
  Layer sorted_first{{dir("a"), file("a/x", 100), file("a/x", 40), file("a/y", 50), whiteout("a/z"),
                      dir("b"), file("b/c", 7), opaque("b")}};
  // In path order until a file comes below a whiteout's target: what was
  // worked out before the order broke must stand for the entries it came
  // from (the whiteout, not a file at its target, which the new file would
  // make a directory; the second layer writes var/log).
  Layer whiteout_then_unsorted{{dir("a"), file("a/x", 100), whiteout("var/log"), file("z", 3),
                                file("var/log/k", 9), file("a/q", 9), file("z", 4)}};
  for (const Layer& first : {sorted_first, tricky_first_layer(), whiteout_then_unsorted}) {
    const auto [image, scans] = scanned_stack({first, second_layer()});
    const Analysis plain = analyze_layers(image, scans, 50);
    for (const std::size_t begun :
         {std::size_t{1}, std::size_t{3}, std::size_t{5}, scans[0]->entries.size()}) {
      PartialMerge started{std::make_shared<MergedTree>(), begun,
                           std::make_shared<FirstLayerRecord>()};
      const auto head = std::span<const TarEntry>(scans[0]->entries).subspan(0, begun);
      started.tree->add_first_layer(head);
      started.first_layer->add(head);
      const Analysis recorded = analyze_layers(image, scans, 50, started);
      INFO("entries recorded during the scan: " << begun);
      check_same_dive_figures(recorded.dive, plain.dive);
      CHECK(listing(*recorded.tree) == listing(*plain.tree));
    }
  }
}

TEST_CASE("dive: the inefficient list keeps the largest paths and counts them all") {
  // Three paths in both layers: 30+30, 20+5 and 20+20 bytes; ties go by path.
  const std::vector<Layer> layers{Layer{{file("p", 30), file("q", 20), file("r", 20)}},
                                  Layer{{file("p", 30), file("q", 5), file("r", 20)}}};
  const ScannedStack s = scanned_stack(layers);
  for (const std::size_t top : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{50}}) {
    const Analysis a = analyze_layers(s.image, s.scans, top);
    INFO("top " << top);
    CHECK(a.dive.inefficient_total == 3);
    CHECK(a.dive.wasted_bytes == 125);
    REQUIRE(a.dive.inefficient.size() == std::min<std::size_t>(top, 3));
    CHECK(a.dive.inefficient[0].path == "/p");
    if (top >= 2) CHECK(a.dive.inefficient[1].path == "/r");
    if (top >= 3) CHECK(a.dive.inefficient[2].path == "/q");
  }
}

TEST_CASE(
    "attribution: a large image is classified in parallel, in tree order, as one thread would") {
  // Enough files for several threads' shares, with files of known category
  // at the start, the middle and the end.
  constexpr int kFiles = 40000;
  Layer layer;
  layer.entries.push_back(file("usr/lib/x86_64-linux-gnu/libcublas.so.12", 40));
  for (int i = 0; i < kFiles; ++i) {
    layer.entries.push_back(
        file("usr/share/bench/d" + std::to_string(i / 1000) + "/f" + std::to_string(i), 1));
    if (i == kFiles / 2) layer.entries.push_back(file("root/.cache/pip/wheel.whl", 20));
  }
  layer.entries.push_back(file("opt/models/model.safetensors", 1500000));
  const Analysis a = analyze_stack({layer});
  const Attribution attr = attribute(a, builtin_rules());

  // Tree order, worked out here independently of the attribution's walk.
  std::vector<std::string> expected;
  std::function<void(const FileNode&)> walk = [&](const FileNode& node) {
    for (const FileNode* child : node.children()) {
      if (child->type == EntryType::File) expected.push_back(child->path());
      walk(*child);
    }
  };
  walk(a.tree->root());
  REQUIRE(attr.files.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("file " << i);
    REQUIRE(attr.files[i].path == expected[i]);
  }

  const auto category_of = [&](const std::string& path) {
    for (const auto& f : attr.files)
      if (f.path == path) return attr.categories[f.category].name;
    return std::string("missing");
  };
  CHECK(category_of("/usr/lib/x86_64-linux-gnu/libcublas.so.12") == "cuda");
  CHECK(category_of("/root/.cache/pip/wheel.whl") == "cache");
  // Scanned without its first bytes, a name alone makes no model file.
  CHECK(category_of("/opt/models/model.safetensors") == "app");
  CHECK(category_of("/usr/share/bench/d39/f39999") == "other");
  CHECK(attr.total_bytes == a.final_bytes);
}

TEST_CASE(
    "attribution: files handed to a sink are those kept, in the same order, over several chunks",
    "[slow]") {
  // More files than one chunk holds, in directories that a chunk ends inside.
  constexpr int kFiles = 150000;
  Layer layer;
  layer.entries.push_back(file("usr/lib/x86_64-linux-gnu/libcublas.so.12", 40));
  for (int i = 0; i < kFiles; ++i)
    layer.entries.push_back(
        file("usr/share/doc/d" + std::to_string(i / 700) + "/f" + std::to_string(i), 1 + i % 3));
  layer.entries.push_back(file("root/.cache/pip/wheel.whl", 20));
  const Analysis a = analyze_stack({layer});
  const Attribution kept = attribute(a, builtin_rules());

  std::vector<std::string> handed;
  std::size_t wrong_category = 0;
  WasteFinder finder(a, {});
  const Attribution streamed =
      attribute(a, builtin_rules(), [&](const AttributedFile& f, const std::string& category) {
        handed.push_back(std::string(f.path));
        if (category != kept.categories[f.category].name) ++wrong_category;
        finder.add(f, category);
      });
  CHECK(streamed.files.empty());
  CHECK(wrong_category == 0);
  REQUIRE(handed.size() == kept.files.size());
  for (std::size_t i = 0; i < handed.size(); ++i) {
    INFO("file " << i);
    REQUIRE(handed[i] == kept.files[i].path);
  }
  CHECK(streamed.total_bytes == kept.total_bytes);
  REQUIRE(streamed.categories.size() == kept.categories.size());
  for (std::size_t i = 0; i < kept.categories.size(); ++i) {
    CHECK(streamed.categories[i].name == kept.categories[i].name);
    CHECK(streamed.categories[i].bytes == kept.categories[i].bytes);
    CHECK(streamed.categories[i].files == kept.categories[i].files);
    CHECK(streamed.categories[i].children.size() == kept.categories[i].children.size());
  }
  const auto from_sink = finder.finish(streamed);
  const auto from_list = find_waste(a, kept, {});
  REQUIRE(from_sink.size() == from_list.size());
  for (std::size_t i = 0; i < from_list.size(); ++i) {
    CHECK(from_sink[i].id == from_list[i].id);
    CHECK(from_sink[i].bytes == from_list[i].bytes);
    CHECK(from_sink[i].message == from_list[i].message);
    CHECK(from_sink[i].paths.size() == from_list[i].paths.size());
  }
}

TEST_CASE("bulk memory: large blocks are 2 MiB-aligned and usable, small ones come from the heap") {
  std::pmr::memory_resource* bulk = bulk_memory();
  for (const std::size_t size :
       {std::size_t{1} << 20, std::size_t{3} << 20, std::size_t{5000000}}) {
    void* p = bulk->allocate(size, 64);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % (std::size_t{2} << 20) == 0);
    auto* bytes = static_cast<unsigned char*>(p);
    bytes[0] = 1;
    bytes[size - 1] = 2;  // the whole block is mapped
    CHECK(bytes[0] + bytes[size - 1] == 3);
    bulk->deallocate(p, size, 64);
  }
  void* small = bulk->allocate(100, 8);
  static_cast<char*>(small)[99] = 'x';
  bulk->deallocate(small, 100, 8);

  std::pmr::vector<std::uint64_t> v(bulk);
  for (std::uint64_t i = 0; i < 1000000; ++i) v.push_back(i);  // grows through both kinds
  CHECK(v[999999] == 999999);
}

TEST_CASE("text arena: texts stay put across blocks, past the block size, and through a move") {
  TextArena arena;
  std::vector<std::string_view> views;
  std::vector<std::string> originals;
  for (int i = 0; i < 200000; ++i) originals.push_back("usr/share/file-" + std::to_string(i));
  originals.push_back(std::string(5u << 20, 'p'));  // longer than any block
  for (const auto& s : originals) views.push_back(arena.store(s));
  CHECK(arena.store("").empty());
  TextArena moved(std::move(arena));
  TextArena assigned;
  assigned.store("dropped when assigned over");
  assigned = std::move(moved);
  for (std::size_t i = 0; i < originals.size(); ++i) {
    INFO("text " << i);
    REQUIRE(views[i] == originals[i]);
  }
}

TEST_CASE("largest files: among equal sizes the list is chosen by path, not by walk order") {
  Layer layer;
  for (int i = 9; i >= 0; --i) layer.entries.push_back(file("data/f" + std::to_string(i), 10));
  layer.entries.push_back(file("data/big", 11));
  const auto [image, scans] = scanned_stack({layer});
  const Analysis a = analyze_layers(image, scans, 3);
  REQUIRE(a.largest_files.size() == 3);
  CHECK(a.largest_files[0].path == "/data/big");
  CHECK(a.largest_files[1].path == "/data/f0");
  CHECK(a.largest_files[2].path == "/data/f1");
}
