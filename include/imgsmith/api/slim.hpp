// The plan for making an existing image smaller (`imgsmith slim`): which
// layers stay byte for byte, which are squashed into one, and which of the
// files analyze's findings name are removed, each with its bytes, its layer
// and the finding it came from. Made from one analysis of the image; the
// plan's figure for the result is exact in regular-file bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/api/analyze.hpp"

namespace imgsmith {

// The finding ids whose files slim can remove: caches and lists a tool
// rebuilds when it needs them, documentation, static libraries.
const std::vector<std::string>& slim_removable_ids();
// What slim removes unless told otherwise: the caches and apt's lists (the
// files no program of the image reads at run time). Documentation and
// static libraries only when named.
const std::vector<std::string>& slim_default_removals();
// `text` (comma-separated finding ids, "caches" for the six caches, "none"
// for nothing) as a list of ids. Throws InputError naming an id slim
// cannot remove.
std::vector<std::string> parse_slim_removals(const std::string& text);

struct SlimRequest {
  // The image and how to read it. slim sets its top (every path), floor
  // (none) and base_layers itself.
  AnalyzeRequest analyze;
  std::vector<std::string> remove = slim_default_removals();
  // Squash the layers above the kept ones into one, which drops the bytes
  // hidden in them (deleted or replaced by a later layer).
  bool squash = true;
  // The first N layers are kept byte for byte (their blobs stay shared with
  // the base image); unset: the base image's layers, from the history.
  std::optional<std::size_t> keep_base;
};

// A file the plan removes, or one a chosen finding names that it keeps.
struct SlimPath {
  std::string path;
  std::uint64_t bytes = 0;
  std::uint32_t layer = 0;
  std::string finding;
  std::string why;  // a kept one: why it stays
};

struct SlimPlan {
  Analysis analysis;          // the image as read
  std::size_t keep_base = 0;  // layers 0..keep_base-1 are kept as they are
  std::string keep_evidence;  // "history", "--keep-base", "" (no base found)
  bool squash = true;
  std::vector<std::string> remove;  // the finding ids asked for
  // The bytes hidden in the squashed layers: each a hiding operation whose
  // bytes a layer above the kept ones added.
  std::vector<WasteGroup> squashed;
  std::vector<SlimPath> removed;  // largest first
  // Files a chosen finding names that stay: a kept layer holds them, or
  // their content has other names (hard links) that stay, so removing
  // this one would free nothing.
  std::vector<SlimPath> kept;
  std::uint64_t squashed_bytes = 0;
  std::uint64_t removed_bytes = 0;
  std::uint64_t kept_bytes = 0;

  // Regular-file bytes over all layers, before and after.
  std::uint64_t before_bytes() const { return analysis.layers_bytes; }
  std::uint64_t after_bytes() const {
    return analysis.layers_bytes - squashed_bytes - removed_bytes;
  }
};

// Reads the image once and makes the plan. Throws InputError for an input
// it cannot read, an id slim cannot remove, or --keep-base past the layers.
SlimPlan plan_slim(const SlimRequest& request);

}  // namespace imgsmith
