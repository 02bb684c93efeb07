#include "imgsmith/dive_metrics.hpp"

#include <algorithm>
#include <cstring>
#include <queue>

namespace imgsmith {
namespace {

std::uint64_t subtree_bytes(const FileNode& node) {
  std::uint64_t total = node.size;
  for (const FileNode* child : node.children()) total += subtree_bytes(*child);
  return total;
}

// Byte order with '/' before every other byte: a path's descendants then
// sort directly after it ("a/b", "a/b/c", "a/b-c"), which is also the order
// a directory walk writes a tar in, so most layers arrive sorted.
bool path_before(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  const auto diff = std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin());
  if (diff.first == a.begin() + static_cast<std::ptrdiff_t>(n)) return a.size() < b.size();
  const auto x = static_cast<unsigned char>(*diff.first), y = static_cast<unsigned char>(*diff.second);
  if (x == '/') return true;
  if (y == '/') return false;
  return x < y;
}

bool is_under(std::string_view path, std::string_view dir) {
  return path.size() > dir.size() && path[dir.size()] == '/' && path.starts_with(dir);
}

}  // namespace

void DiveEfficiency::add_layer(const LayerScan& layer, const MergedTree& below) {
  layer_bytes_.push_back(layer.content_bytes);
  const auto& entries = layer.entries;

  // dive's layer tree: the entries it can add (it refuses .wh..wh.* names),
  // the last one winning when a path repeats, and every parent implied.
  // In path order, repeats are neighbours and a path's first descendant, if
  // any, is the next different path.
  std::pmr::vector<std::uint32_t> order(bulk_memory());
  order.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (!split_path(entries[i].path).second.starts_with(kWhiteoutMetaPrefix))
      order.push_back(static_cast<std::uint32_t>(i));
  const auto by_path = [&](std::uint32_t a, std::uint32_t b) {
    return path_before(entries[a].path, entries[b].path);
  };
  if (!std::is_sorted(order.begin(), order.end(), by_path))
    std::stable_sort(order.begin(), order.end(), by_path);

  std::pmr::vector<Leaf> leaves(bulk_memory());
  leaves.reserve(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const TarEntry& e = entries[order[k]];
    if (k + 1 < order.size()) {
      const std::string_view next = entries[order[k + 1]].path;
      if (next == e.path) continue;           // a later entry of the same path wins
      if (is_under(next, e.path)) continue;   // not a leaf of this layer's tree
    }
    const auto [dir, name] = split_path(e.path);
    if (name.starts_with(kWhiteoutPrefix)) {
      // A whiteout counts at the path it deletes: a directory's bytes, or 0.
      std::string target(dir);
      if (!target.empty()) target.push_back('/');
      target += name.substr(kWhiteoutPrefix.size());
      const FileNode* gone = below.find(target);
      const std::uint64_t size =
          gone != nullptr && gone->type == EntryType::Dir ? subtree_bytes(*gone) : 0;
      leaves.push_back(Leaf{whiteout_targets_.emplace_back(std::move(target)), size});
    } else {
      leaves.push_back(Leaf{e.path, e.type == EntryType::File ? e.size : 0});
    }
  }
  // A whiteout's key is not its own path, so it may sit out of order.
  const auto by_key = [](const Leaf& a, const Leaf& b) { return path_before(a.key, b.key); };
  if (!std::is_sorted(leaves.begin(), leaves.end(), by_key))
    std::sort(leaves.begin(), leaves.end(), by_key);
  leaves_.push_back(std::move(leaves));
}

DiveFigures DiveEfficiency::finish() const {
  DiveFigures out;
  std::uint64_t minimum_sum = 0, cumulative_sum = 0;

  // Merges the layers' sorted lists; each run of one key is one path of
  // dive's merged tree, with a copy per layer (or per repeat) that has it.
  using Cursor = std::pair<std::size_t, std::size_t>;  // layer, position
  const auto later = [&](const Cursor& a, const Cursor& b) {
    return path_before(leaves_[b.first][b.second].key, leaves_[a.first][a.second].key);
  };
  std::priority_queue<Cursor, std::vector<Cursor>, decltype(later)> heap(later);
  for (std::size_t l = 0; l < leaves_.size(); ++l)
    if (!leaves_[l].empty()) heap.emplace(l, 0);
  while (!heap.empty()) {
    const std::string_view key = leaves_[heap.top().first][heap.top().second].key;
    std::uint64_t minimum = 0, cumulative = 0;
    std::uint32_t copies = 0;
    while (!heap.empty()) {
      const auto [l, pos] = heap.top();
      const Leaf& leaf = leaves_[l][pos];
      if (leaf.key != key) break;
      heap.pop();
      minimum = copies == 0 ? leaf.size : std::min(minimum, leaf.size);
      cumulative += leaf.size;
      copies += 1;
      if (pos + 1 < leaves_[l].size()) heap.emplace(l, pos + 1);
    }
    minimum_sum += minimum;
    cumulative_sum += cumulative;
    if (copies >= 2) {
      out.wasted_bytes += cumulative;
      out.inefficient.push_back(InefficientPath{"/" + std::string(key), cumulative, copies});
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
