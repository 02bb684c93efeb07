// Duplicate files: the same content at different paths of the final image
// (--hash), found by size first and digested only where sizes meet.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "analyze_internal.hpp"

namespace imgsmith {

// Identical content at different paths. Only files whose size another
// visible file shares are digested: a second, targeted pass over the layers
// that hold them where the store can seek, else the digests of the one pass.
std::vector<DuplicateGroup> find_duplicates(
    const BlobStore& store, const ResolvedImage& image,
    const std::vector<std::shared_ptr<const LayerScan>>& scans, const MergedTree& tree,
    const AnalyzeOptions& options) {
  // Each visible content under the regular-file name that created it.
  std::vector<std::string> path_of(tree.inodes().size());
  // Content only a hard link still shows: a later layer replaced its file
  // name (an `ln` in a later RUN copies the file up, leaving the old link on
  // the old content), so its bytes are under the link's target in its layer.
  std::vector<const FileNode*> shown_by_link(tree.inodes().size(), nullptr);
  std::vector<const FileNode*> stack{&tree.root()};
  while (!stack.empty()) {
    const FileNode* node = stack.back();
    stack.pop_back();
    for (const FileNode* child : node->children()) {
      if (child->type == EntryType::File && child->inode() >= 0)
        path_of[static_cast<std::size_t>(child->inode())] = child->path().substr(1);
      if (child->type == EntryType::Hardlink && child->inode() >= 0 &&
          shown_by_link[static_cast<std::size_t>(child->inode())] == nullptr)
        shown_by_link[static_cast<std::size_t>(child->inode())] = child;
      stack.push_back(child);
    }
  }
  // The name a report shows: path_of, or the link's own name where the
  // bytes are read under its target's.
  std::vector<std::string> shown_as(tree.inodes().size());
  std::map<std::uint32_t, std::unordered_map<std::string_view, std::string_view>> link_targets;
  for (std::size_t i = 0; i < path_of.size(); ++i) {
    const FileNode* link = shown_by_link[i];
    if (!path_of[i].empty() || link == nullptr || link->layer >= scans.size()) continue;
    auto [targets, fresh] = link_targets.try_emplace(link->layer);
    if (fresh)
      for (const TarEntry& e : scans[link->layer]->entries)
        if (e.type == EntryType::Hardlink) targets->second.emplace(e.path, e.link);
    const std::string path = link->path().substr(1);
    if (const auto t = targets->second.find(path); t != targets->second.end()) {
      path_of[i] = std::string(t->second);
      shown_as[i] = path;
    }
  }
  std::map<std::uint64_t, std::vector<std::size_t>> by_size;
  for (std::size_t i = 0; i < tree.inodes().size(); ++i)
    if (tree.inodes()[i].names > 0 && tree.inodes()[i].size > 0 && !path_of[i].empty())
      by_size[tree.inodes()[i].size].push_back(i);
  std::erase_if(by_size, [](const auto& entry) { return entry.second.size() < 2; });
  if (by_size.empty()) return {};

  // Which paths to digest in which layer.
  std::map<std::uint32_t, std::set<std::string>> wanted;
  for (const auto& [size, ids] : by_size)
    for (const std::size_t id : ids) wanted[tree.inodes()[id].layer].insert(path_of[id]);

  std::map<std::pair<std::uint32_t, std::string>, std::string> digest_of;
  const auto record = [&](std::uint32_t layer, const LayerScan& scan) {
    for (const auto& [path, digest] : scan.digests) digest_of[{layer, path}] = digest;  // last wins
  };
  if (store.parallel_scans()) {
    std::vector<std::string> blobs;
    std::vector<std::uint32_t> layers;
    std::vector<CaptureFn> hash;
    for (const auto& entry : wanted) {
      blobs.push_back(image.layers[entry.first].blob);
      layers.push_back(entry.first);
      hash.push_back([&paths = entry.second](std::string_view p, std::uint64_t) {
        return paths.count(std::string(p)) != 0;
      });
    }
    const auto rescans = scan_blobs(store, blobs, hash, options, "hash layer");
    for (std::size_t i = 0; i < rescans.size(); ++i) record(layers[i], *rescans[i]);
  } else {
    for (const auto& entry : wanted) record(entry.first, *scans[entry.first]);
  }

  std::map<std::pair<std::uint64_t, std::string>, DuplicateGroup> groups;
  for (const auto& [size, ids] : by_size)
    for (const std::size_t id : ids) {
      const auto& inode = tree.inodes()[id];
      const auto it = digest_of.find({inode.layer, path_of[id]});
      if (it == digest_of.end()) continue;
      DuplicateGroup& g = groups[{size, it->second}];
      g.size = size;
      g.digest = it->second;
      g.files.push_back(FileReport{"/" + (shown_as[id].empty() ? path_of[id] : shown_as[id]), size,
                                   inode.layer, inode.names - 1});
    }
  std::vector<DuplicateGroup> out;
  for (auto& [key, g] : groups)
    if (g.files.size() >= 2) out.push_back(std::move(g));
  std::sort(out.begin(), out.end(), [](const DuplicateGroup& a, const DuplicateGroup& b) {
    const auto wa = a.size * (a.files.size() - 1), wb = b.size * (b.files.size() - 1);
    return wa != wb ? wa > wb : a.digest < b.digest;
  });
  return out;
}

}  // namespace imgsmith
