#include <catch2/catch.hpp>

#include "imgsmith/analysis/merged_tree.hpp"
#include "scan_helpers.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;

namespace {

std::unique_ptr<MergedTree> merge(const std::vector<Layer>& layers) {
  auto tree = std::make_unique<MergedTree>();
  for (std::size_t i = 0; i < layers.size(); ++i)
    tree->apply(scanned(layers[i]), static_cast<std::uint32_t>(i));
  return tree;
}

const WasteGroup* waste_at(const std::vector<WasteGroup>& waste, const std::string& path) {
  for (const auto& w : waste)
    if (w.path == path) return &w;
  return nullptr;
}

}  // namespace

TEST_CASE("merge: a whiteout deletes the lower file and its bytes become waste") {
  const auto t_tree = merge(
      {Layer{{dir("etc"), file("etc/a", 100), file("etc/b", 7)}}, Layer{{whiteout("etc/a")}}});
  const MergedTree& t = *t_tree;
  CHECK(t.find("etc/a") == nullptr);
  CHECK(t.find("etc/b") != nullptr);
  CHECK(t.visible_bytes() == 7);
  const WasteGroup* w = waste_at(t.waste(), "/etc/a");
  REQUIRE(w != nullptr);
  CHECK(w->how == HiddenBy::Deleted);
  CHECK(w->bytes == 100);
  CHECK(w->added_layer == 0);
  CHECK(w->hidden_layer == 1);
}

TEST_CASE("merge: a whiteout of a directory removes everything under it") {
  const auto t_tree = merge({Layer{{dir("var"), dir("var/cache"), file("var/cache/1", 10),
                                    dir("var/cache/sub"), file("var/cache/sub/2", 20)}},
                             Layer{{whiteout("var/cache")}}});
  const MergedTree& t = *t_tree;
  CHECK(t.find("var/cache") == nullptr);
  CHECK(t.find("var") != nullptr);
  CHECK(t.visible_bytes() == 0);
  const WasteGroup* w = waste_at(t.waste(), "/var/cache");
  REQUIRE(w != nullptr);
  CHECK(w->bytes == 30);
  CHECK(w->files == 2);
}

TEST_CASE("merge: a whiteout hides lower layers only, not its own layer's file") {
  // The new file comes before the whiteout in the tar: order must not matter.
  const auto t_tree = merge({Layer{{file("x", 50)}}, Layer{{file("x", 9), whiteout("x")}}});
  const MergedTree& t = *t_tree;
  const FileNode* x = t.find("x");
  REQUIRE(x != nullptr);
  CHECK(t.file_size(*x) == 9);
  CHECK(x->layer == 1);
  CHECK(t.visible_bytes() == 9);
}

TEST_CASE("merge: opaque whiteout hides lower children only") {
  const auto t_tree = merge({Layer{{dir("opt"), file("opt/old1", 11), file("opt/old2", 22),
                                    dir("opt/d"), file("opt/d/old3", 33)}},
                             // The marker sits after the new child: it still applies first.
                             Layer{{dir("opt"), file("opt/new", 5), opaque("opt")}}});
  const MergedTree& t = *t_tree;
  CHECK(t.find("opt/old1") == nullptr);
  CHECK(t.find("opt/old2") == nullptr);
  CHECK(t.find("opt/d") == nullptr);
  REQUIRE(t.find("opt/new") != nullptr);
  CHECK(t.find("opt/.wh..wh..opq") == nullptr);
  CHECK(t.visible_bytes() == 5);
  const WasteGroup* w = waste_at(t.waste(), "/opt");
  REQUIRE(w != nullptr);
  CHECK(w->how == HiddenBy::Opaque);
  CHECK(w->bytes == 66);
  CHECK(w->files == 3);
}

TEST_CASE("merge: a non-directory replacing a directory removes the whole subtree") {
  const auto t_tree = merge({Layer{{dir("app"), dir("app/lib"), file("app/lib/x.so", 400)}},
                             Layer{{file("app/lib", 3)}}});
  const MergedTree& t = *t_tree;
  const FileNode* lib = t.find("app/lib");
  REQUIRE(lib != nullptr);
  CHECK(lib->type == EntryType::File);
  CHECK(!lib->has_children());
  CHECK(t.visible_bytes() == 3);
  const WasteGroup* w = waste_at(t.waste(), "/app/lib");
  REQUIRE(w != nullptr);
  CHECK(w->how == HiddenBy::Replaced);
  CHECK(w->bytes == 400);
}

TEST_CASE("merge: a file under a path that was a file replaces it with a directory") {
  const auto t_tree = merge({Layer{{file("conf", 12)}}, Layer{{file("conf/a", 1)}}});
  const MergedTree& t = *t_tree;
  REQUIRE(t.find("conf") != nullptr);
  CHECK(t.find("conf")->type == EntryType::Dir);
  CHECK(t.visible_bytes() == 1);
}

TEST_CASE("merge: directory over directory merges children") {
  const auto t_tree = merge({Layer{{dir("d"), file("d/a", 1)}}, Layer{{dir("d"), file("d/b", 2)}}});
  const MergedTree& t = *t_tree;
  CHECK(t.find("d/a") != nullptr);
  CHECK(t.find("d/b") != nullptr);
  CHECK(t.visible_bytes() == 3);
  CHECK(t.waste().empty());
}

TEST_CASE("merge: hard links are counted once") {
  const auto t_tree =
      merge({Layer{{dir("bin"), file("bin/busybox", 1000), hardlink("bin/sh", "bin/busybox"),
                    hardlink("bin/ls", "bin/busybox")}}});
  const MergedTree& t = *t_tree;
  CHECK(t.visible_bytes() == 1000);
  CHECK(t.node_count() == 4);
}

TEST_CASE("merge: content stays while any hard link to it is visible") {
  const auto t_tree = merge({Layer{{file("a", 500), hardlink("b", "a")}}, Layer{{whiteout("a")}}});
  const MergedTree& t = *t_tree;
  CHECK(t.visible_bytes() == 500);
  CHECK(t.waste().empty());
  const auto gone_tree =
      merge({Layer{{file("a", 500), hardlink("b", "a")}}, Layer{{whiteout("a"), whiteout("b")}}});
  const MergedTree& gone = *gone_tree;
  CHECK(gone.visible_bytes() == 0);
  REQUIRE(gone.waste().size() == 1);
  CHECK(gone.waste()[0].bytes == 500);
}

TEST_CASE("merge: an overwritten file is waste attributed to both layers") {
  const Analysis a =
      analyze_stack({Layer{{file("model.bin", 1000)}}, Layer{{file("model.bin", 1200)}}});
  CHECK(a.layers_bytes == 2200);
  CHECK(a.final_bytes == 1200);
  CHECK(a.wasted_bytes == 1000);
  REQUIRE(a.waste.size() == 1);
  CHECK(a.waste[0].how == HiddenBy::Overwritten);
  CHECK(a.waste[0].added_layer == 0);
  CHECK(a.waste[0].hidden_layer == 1);
  REQUIRE(a.largest_files.size() == 1);
  CHECK(a.largest_files[0].layer == 1);
}

TEST_CASE("merge: wasted bytes equal layer bytes minus final bytes, whatever hid them") {
  const Analysis a =
      analyze_stack({Layer{{dir("a"), file("a/1", 10), file("a/2", 20), dir("b"), file("b/3", 30),
                            file("c", 40), hardlink("d", "c")}},
                     Layer{{whiteout("a/1"), opaque("b"), file("b/4", 4), file("c", 41)}},
                     Layer{{file("a", 1), whiteout("d")}}});
  std::uint64_t waste = 0;
  for (const auto& w : a.waste) waste += w.bytes;
  CHECK(a.layers_bytes == 100 + 45 + 1);
  CHECK(a.final_bytes == 4 + 41 + 1);
  CHECK(a.wasted_bytes == a.layers_bytes - a.final_bytes);
  CHECK(waste == a.wasted_bytes);
}

TEST_CASE("merge: removed children stay out of every walk, and what is added again comes last") {
  // d holds x, y, z. Layer 1 rewrites x (the old one is hidden, not
  // unlinked) and deletes y; layer 2 adds y back. Deleting d then counts
  // each visible file once: the hidden ones are not released again.
  const auto tree = merge({Layer{{dir("d"), file("d/x", 10), file("d/y", 20), file("d/z", 30)}},
                           Layer{{file("d/x", 5), whiteout("d/y")}}, Layer{{file("d/y", 7)}}});
  std::vector<std::string> names;
  for (const FileNode* child : tree->find("d")->children()) names.emplace_back(child->name());
  CHECK(names == std::vector<std::string>{"z", "x", "y"});
  CHECK(tree->visible_bytes() == 42);
  CHECK(tree->node_count() == 4);  // d and its three files

  auto deleted = merge({Layer{{dir("d"), file("d/x", 10), file("d/y", 20), file("d/z", 30)}},
                        Layer{{file("d/x", 5), whiteout("d/y")}}, Layer{{file("d/y", 7)}},
                        Layer{{whiteout("d")}}});
  // One group per layer that added what went: x in 1, y in 2, z in 0.
  std::uint64_t bytes = 0, files = 0;
  for (const auto& g : deleted->waste())
    if (g.path == "/d") bytes += g.bytes, files += g.files;
  CHECK(files == 3);
  CHECK(bytes == 42);
  CHECK(deleted->visible_bytes() == 0);
  CHECK(deleted->node_count() == 0);
  CHECK(!deleted->root().has_children());
}

TEST_CASE("merge: an opaque directory hides every lower child, one at a time, none twice") {
  const auto tree =
      merge({Layer{{dir("o"), file("o/a", 1), file("o/b", 2), dir("o/s"), file("o/s/c", 4)}},
             Layer{{file("o/a", 8)}}, Layer{{dir("o"), opaque("o"), file("o/n", 16)}}});
  std::vector<std::string> names;
  for (const FileNode* child : tree->find("o")->children()) names.emplace_back(child->name());
  CHECK(names == std::vector<std::string>{"n"});
  CHECK(tree->visible_bytes() == 16);
  std::uint64_t bytes = 0, files = 0;
  for (const auto& g : tree->waste())
    if (g.path == "/o") bytes += g.bytes, files += g.files;
  CHECK(files == 3);  // a (8), b, s/c; the first a was overwritten in layer 1
  CHECK(bytes == 8 + 2 + 4);
}
