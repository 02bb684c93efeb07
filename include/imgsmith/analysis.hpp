// The analysis of one image: reading, merging and measuring.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "imgsmith/blob_store.hpp"
#include "imgsmith/dive_metrics.hpp"
#include "imgsmith/image.hpp"
#include "imgsmith/merged_tree.hpp"

namespace imgsmith {

struct LayerReport {
  std::uint32_t index = 0;
  std::string digest;
  std::string diff_id;
  std::uint64_t size_bytes = 0;                   // regular-file bytes in the layer
  std::optional<std::uint64_t> compressed_bytes;  // the stored blob, when compressed
  std::uint64_t blob_bytes = 0;
  std::string compression;
  std::uint64_t entries = 0;
  std::string created_by;
};

struct FileReport {
  std::string path;
  std::uint64_t bytes = 0;
  std::uint32_t layer = 0;
  std::uint32_t hard_links = 0;  // other visible names of the same content
};

// Files with identical content (same size and SHA-256) at different paths.
struct DuplicateGroup {
  std::uint64_t size = 0;
  std::string digest;
  std::vector<FileReport> files;  // path, bytes, layer
};

struct Analysis {
  std::string source;
  std::string format;
  std::vector<std::string> tags;
  std::string config_digest;
  std::string os, architecture, variant;

  std::uint64_t layers_bytes = 0;
  std::uint64_t final_bytes = 0;
  std::uint64_t wasted_bytes = 0;  // layers_bytes - final_bytes
  std::optional<std::uint64_t> compressed_bytes;
  std::uint64_t layer_entries = 0;  // tar entries over all layers
  std::uint64_t final_entries = 0;  // paths in the merged tree

  DiveFigures dive;
  std::vector<LayerReport> layers;
  std::vector<FileReport> largest_files;
  std::vector<WasteGroup> waste;  // every hiding operation, largest first
  std::size_t top = 10;           // how many files and waste rows reports list
  std::vector<std::string> warnings;
  std::string working_dir;        // the config's WorkingDir

  // The merged filesystem, and the captured package-database files that are
  // visible in it (the top layer's copy of each path), for attribution.
  std::shared_ptr<const MergedTree> tree;
  std::vector<CapturedFile> metadata;
  std::vector<DuplicateGroup> duplicates;  // with --hash only; most bytes first

  std::uint64_t bytes_read = 0;  // from disk, to show what seeking saved
  double seconds = 0;
};

struct AnalyzeOptions {
  ImageSelector selector;
  std::size_t top = 10;
  unsigned threads = 0;  // 0: one per core
  ProgressFn progress;
  CaptureFn capture;     // package-database files to keep (attribution)
  bool hash_duplicates = false;  // digest files whose sizes collide (--hash)
};

// Opens, resolves and analyses the image at `path`. Throws InputError.
Analysis analyze_image(const std::string& path, const AnalyzeOptions& options);

// The measuring half, on layers already scanned (used by analyze_image and by
// tests that assemble layers directly).
Analysis analyze_layers(const ResolvedImage& image,
                        const std::vector<std::shared_ptr<const LayerScan>>& scans,
                        std::size_t top);

}  // namespace imgsmith
