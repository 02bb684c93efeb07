#include "imgsmith/dive_metrics.hpp"

#include <algorithm>
#include <unordered_set>

namespace imgsmith {
namespace {

std::uint64_t subtree_bytes(const FileNode& node) {
  std::uint64_t total = node.size;
  for (const auto& [name, child] : node.children) total += subtree_bytes(*child);
  return total;
}

}  // namespace

void DiveEfficiency::add_layer(const LayerScan& layer, const MergedTree& below) {
  layer_bytes_.push_back(layer.content_bytes);

  // dive's layer tree: the entries it can add (it refuses .wh..wh.* names),
  // the last one winning when a path repeats, and every parent implied.
  std::unordered_map<std::string_view, std::size_t> last;
  std::unordered_set<std::string_view> parents;
  last.reserve(layer.entries.size());
  for (std::size_t i = 0; i < layer.entries.size(); ++i) {
    const std::string_view path = layer.entries[i].path;
    if (split_path(path).second.starts_with(kWhiteoutMetaPrefix)) continue;
    last[path] = i;
    // Ancestors, deepest first; once one is known, so are all above it.
    for (auto slash = path.rfind('/'); slash != std::string_view::npos && slash > 0;
         slash = path.rfind('/', slash - 1))
      if (!parents.insert(path.substr(0, slash)).second) break;
  }

  for (std::size_t i = 0; i < layer.entries.size(); ++i) {
    const TarEntry& e = layer.entries[i];
    const auto found = last.find(e.path);
    if (found == last.end() || found->second != i) continue;
    if (parents.count(e.path) != 0) continue;  // not a leaf of this layer's tree
    const auto [dir, name] = split_path(e.path);
    std::uint64_t size = 0;
    PathStat* stat = nullptr;
    if (name.starts_with(kWhiteoutPrefix)) {
      std::string target(dir);
      if (!target.empty()) target.push_back('/');
      target += name.substr(kWhiteoutPrefix.size());
      const FileNode* gone = below.find(target);
      if (gone != nullptr && gone->type == EntryType::Dir) size = subtree_bytes(*gone);
      auto it = paths_.find(target);
      if (it == paths_.end())
        it = paths_.emplace(whiteout_targets_.emplace_back(std::move(target)), PathStat{}).first;
      stat = &it->second;
    } else {
      size = e.type == EntryType::File ? e.size : 0;
      stat = &paths_[e.path];
    }
    stat->minimum = stat->copies == 0 ? size : std::min(stat->minimum, size);
    stat->cumulative += size;
    stat->copies += 1;
  }
}

DiveFigures DiveEfficiency::finish() const {
  DiveFigures out;
  std::uint64_t minimum_sum = 0, cumulative_sum = 0;
  for (const auto& [path, stat] : paths_) {
    minimum_sum += stat.minimum;
    cumulative_sum += stat.cumulative;
    if (stat.copies >= 2) {
      out.wasted_bytes += stat.cumulative;
      out.inefficient.push_back(
          InefficientPath{"/" + std::string(path), stat.cumulative, stat.copies});
    }
  }
  out.efficiency = cumulative_sum == 0 ? 1.0
                                       : static_cast<double>(minimum_sum) /
                                             static_cast<double>(cumulative_sum);
  for (std::size_t i = 0; i < layer_bytes_.size(); ++i) {
    out.size_bytes += layer_bytes_[i];
    if (i > 0) out.user_size_bytes += layer_bytes_[i];
  }
  out.user_wasted_percent = out.user_size_bytes == 0
                                ? 0.0
                                : static_cast<double>(out.wasted_bytes) /
                                      static_cast<double>(out.user_size_bytes);
  std::sort(out.inefficient.begin(), out.inefficient.end(), [](const auto& a, const auto& b) {
    return a.cumulative_bytes != b.cumulative_bytes ? a.cumulative_bytes > b.cumulative_bytes
                                                    : a.path < b.path;
  });
  return out;
}

}  // namespace imgsmith
