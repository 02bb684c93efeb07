// dive's efficiency figures, computed the way dive computes them, so that CI
// thresholds written for dive keep their meaning (REFERENCE §3).
//
// dive visits the leaves of each layer's own tree. A path's "cumulative size"
// is the sum of its sizes over the layers it appears in; its minimum is the
// smallest of them. A whiteout counts, at the deleted path, the bytes of the
// directory it deletes, or 0 when it deletes a file. Opaque markers are
// invisible to dive. Efficiency is the sum of minimums over the sum of
// cumulative sizes; "wasted" is the cumulative size of every path seen more
// than once, surviving copy included (dive issue #684 calls this double
// counting, and it is, but users' thresholds are written against it).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "imgsmith/bulk_memory.hpp"
#include "imgsmith/layer_scan.hpp"
#include "imgsmith/merged_tree.hpp"

namespace imgsmith {

struct InefficientPath {
  std::string path;
  std::uint64_t cumulative_bytes = 0;
  std::uint32_t copies = 0;
};

struct DiveFigures {
  double efficiency = 1.0;
  std::uint64_t wasted_bytes = 0;
  double user_wasted_percent = 0.0;  // a ratio, despite the name (dive's)
  std::uint64_t size_bytes = 0;
  std::uint64_t user_size_bytes = 0;
  std::vector<InefficientPath> inefficient;  // largest first
};

class DiveEfficiency {
 public:
  // Call for each layer in order, before the layer is applied to `below`.
  // Paths are kept as views into `layer`, which must outlive finish().
  void add_layer(const LayerScan& layer, const MergedTree& below);
  DiveFigures finish() const;

 private:
  // One leaf of one layer's tree, keyed by the path dive counts it at
  // (without the leading "/"; a whiteout's target, not the whiteout).
  struct Leaf {
    std::string_view key;
    std::uint64_t size = 0;
  };
  // Each layer's leaves, sorted by key in path order: finish() merges the
  // layers' lists instead of keeping a map of every path ever seen, which
  // cost more than reading the layers did.
  std::vector<std::pmr::vector<Leaf>> leaves_;
  std::deque<std::string> whiteout_targets_;  // owns keys no layer holds
  std::vector<std::uint64_t> layer_bytes_;
};

}  // namespace imgsmith
