#include "imgsmith/api/slim.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string_view>

#include "imgsmith/analysis/merged_tree.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

// Caches and lists whose tool fills them again when it needs them (pip,
// npm/Yarn/pnpm, RubyGems, Go and Cargo, apt's and conda's archives, apt's
// lists: `apt-get update`); data/findings.json says what each covers.
const std::vector<std::string>& cache_ids() {
  static const std::vector<std::string> ids = {"pip-cache",   "node-cache",    "gem-cache",
                                               "build-cache", "package-cache", "apt-lists"};
  return ids;
}

bool is_removable(const std::string& id) {
  const auto& all = slim_removable_ids();
  return std::find(all.begin(), all.end(), id) != all.end();
}

void check_removals(const std::vector<std::string>& ids) {
  for (const std::string& id : ids)
    if (!is_removable(id))
      throw InputError("--remove '" + id + "': slim removes the files of " +
                       join(slim_removable_ids(), ", ") +
                       " (\"caches\" for the caches and apt's lists, \"none\" for nothing)");
}

// The content a visible path ("/a/b") shows: the layer that wrote it and
// how many visible names it has (1: no other); nullptr for a path the tree
// does not have.
const MergedTree::Inode* content_at(const MergedTree& tree, std::string_view path) {
  if (path.starts_with('/')) path.remove_prefix(1);
  const FileNode* node = tree.find(path);
  if (node == nullptr || node->inode() < 0) return nullptr;
  return &tree.inodes()[static_cast<std::size_t>(node->inode())];
}

bool larger(const SlimPath& a, const SlimPath& b) {
  return a.bytes != b.bytes ? a.bytes > b.bytes : a.path < b.path;
}

}  // namespace

const std::vector<std::string>& slim_removable_ids() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> all = cache_ids();
    all.push_back("docs");
    all.push_back("static-libs");
    return all;
  }();
  return ids;
}

const std::vector<std::string>& slim_default_removals() { return cache_ids(); }

std::vector<std::string> parse_slim_removals(const std::string& text) {
  std::vector<std::string> ids;
  const auto add = [&](const std::string& id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  for (const std::string& part : split(text, ",")) {
    const std::string id(trim(part));
    if (id == "caches") {
      for (const std::string& cache : cache_ids()) add(cache);
    } else if (id != "none") {
      check_removals({id});
      add(id);
    }
  }
  return ids;
}

SlimPlan plan_slim(const SlimRequest& request) {
  check_removals(request.remove);
  AnalyzeRequest read = request.analyze;
  // Every path of every finding, however small: the plan lists each file
  // it removes, and its figures are the sum of them.
  read.options.top = std::numeric_limits<std::size_t>::max();
  read.floor = FindingFloor{0, 0.0};
  read.options.base_layers = request.keep_base;
  read.vram.reset();
  read.read_kernels = false;
  read.gates = GateConfig{};
  read.ignore.clear();
  AnalyzeResult result = analyze(read);

  SlimPlan plan;
  if (request.keep_base && *request.keep_base > result.analysis.layers.size())
    throw InputError("--keep-base " + std::to_string(*request.keep_base) + ": " +
                     request.analyze.image + " has " +
                     std::to_string(result.analysis.layers.size()) +
                     " layers; keep at most that many");
  plan.keep_base = result.analysis.base_layers;
  plan.keep_evidence =
      request.keep_base ? std::string("--keep-base") : result.analysis.base_evidence;
  plan.squash = request.squash;
  plan.remove = request.remove;

  // Squashed, the layers above the kept ones become their merged view: what
  // one of them added and a later one hid is gone. Bytes a kept layer added
  // stay in it, hidden or not.
  if (request.squash)
    for (const WasteGroup& w : result.analysis.waste)
      if (w.added_layer >= plan.keep_base) {
        plan.squashed_bytes += w.bytes;
        plan.squashed.push_back(w);
      }

  std::set<std::string_view> planned;  // a file two findings name is planned once
  for (const Finding& finding : result.findings) {
    if (std::find(request.remove.begin(), request.remove.end(), finding.id) == request.remove.end())
      continue;
    for (const FindingPath& p : finding.paths) {
      if (!planned.insert(p.path).second) continue;
      const MergedTree::Inode* content =
          result.analysis.tree ? content_at(*result.analysis.tree, p.path) : nullptr;
      SlimPath path{p.path, p.bytes, content != nullptr ? content->layer : 0u, finding.id, ""};
      // Attribution names each content once, by the first of its names the
      // walk meets: a uv cache hard-linked into a virtualenv is named by
      // the cache's path, and its bytes stay with the other name.
      if (content == nullptr)  // (nothing says which layer to rewrite)
        path.why = "not among the image's visible files";
      else if (path.layer < plan.keep_base)
        path.why = "layer " + std::to_string(path.layer) + " is kept";
      else if (content->names > 1)
        path.why = "a hard link: its content has " + std::to_string(content->names - 1) +
                   " other name" + (content->names == 2 ? "" : "s") + ", which stay" +
                   (content->names == 2 ? "s" : "");
      if (path.why.empty()) {
        plan.removed_bytes += p.bytes;
        plan.removed.push_back(std::move(path));
      } else {
        plan.kept_bytes += p.bytes;
        plan.kept.push_back(std::move(path));
      }
    }
  }
  std::sort(plan.removed.begin(), plan.removed.end(), larger);
  std::sort(plan.kept.begin(), plan.kept.end(), larger);
  plan.analysis = std::move(result.analysis);
  return plan;
}

}  // namespace imgsmith
