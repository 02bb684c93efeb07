// dive's efficiency figures, computed the way dive computes them, so that CI
// thresholds written for dive keep their meaning (docs/dive-metrics.md).
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
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "imgsmith/source/layer_scan.hpp"
#include "imgsmith/util/byte_list.hpp"

namespace imgsmith {

class MergedTree;  // analysis/merged_tree.hpp, included only where the tree is walked

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
  // The largest of the paths seen more than once, largest first, as many as
  // finish() was asked for; inefficient_total counts them all.
  std::vector<InefficientPath> inefficient;
  std::uint64_t inefficient_total = 0;
};

// A first layer's entries as dive counts them, gathered while the layer is
// read, so that the entries themselves need not be kept: the path, type and
// size of each, in tar order, front-coded (a few bytes an entry), and the
// layer's leaves as long as its entries come in path order.
class FirstLayerRecord {
 public:
  FirstLayerRecord();
  ~FirstLayerRecord();
  FirstLayerRecord(const FirstLayerRecord&) = delete;
  FirstLayerRecord& operator=(const FirstLayerRecord&) = delete;

  void add(std::span<const TarEntry> entries);

 private:
  friend class DiveEfficiency;
  struct State;
  std::unique_ptr<State> state_;
};

class DiveEfficiency {
 public:
  // Call for each layer in order, before the layer is applied to `below`.
  // Nothing of `layer` is kept: it may go as soon as this returns.
  void add_layer(const LayerScan& layer, const MergedTree& below);
  // The first layer from its record, in place of add_layer(): nothing lies
  // below it. `content_bytes` is its regular files' bytes. The record is
  // used up.
  void add_first_layer(FirstLayerRecord& record, std::uint64_t content_bytes);
  // The figures, with the `top` largest inefficient paths listed.
  DiveFigures finish(std::size_t top) const;

 private:
  // Each layer's leaves, one per path dive counts there (keyed by that path
  // without the leading "/": a whiteout's target, not the whiteout), sorted
  // by key in path order: finish() merges the layers' lists instead of
  // keeping a map of every path ever seen. The lists are front-coded (each
  // key as the length it shares with the one before, then the rest): sorted
  // paths share most of their bytes, so a leaf costs a few bytes instead of
  // a view into the layer's text, which kept every layer's entries alive.
  std::vector<ByteList> leaves_;
  std::vector<std::uint64_t> layer_bytes_;
};

}  // namespace imgsmith
