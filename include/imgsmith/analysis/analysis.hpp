// The analysis of one image: reading, merging and measuring.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imgsmith/analysis/dive_metrics.hpp"
#include "imgsmith/analysis/waste.hpp"
#include "imgsmith/source/blob_store.hpp"
#include "imgsmith/source/image.hpp"

namespace imgsmith {

class MergedTree;  // analysis/merged_tree.hpp, included only where the tree is walked

struct LayerReport {
  std::uint32_t index = 0;
  std::string digest;
  std::string diff_id;
  std::string listing;  // EntryListing's digest: the entries' names, types, sizes and links
  std::uint64_t size_bytes = 0;                   // regular-file bytes in the layer
  std::optional<std::uint64_t> compressed_bytes;  // the stored blob, when compressed
  std::uint64_t blob_bytes = 0;
  std::string compression;
  std::uint64_t entries = 0;
  std::string created_by;
  bool base = false;  // one of the base image's layers (the first FROM), not the user's
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
  // Of wasted_bytes, what lies under --ignore paths: the waste list leaves
  // it out, and so do the --max-wasted gates.
  std::uint64_t ignored_waste_bytes = 0;
  std::optional<std::uint64_t> compressed_bytes;
  std::uint64_t layer_entries = 0;  // tar entries over all layers
  std::uint64_t final_entries = 0;  // paths in the merged tree

  DiveFigures dive;
  std::vector<LayerReport> layers;
  std::vector<FileReport> largest_files;
  std::vector<WasteGroup> waste;  // every hiding operation, largest first
  std::size_t top = 10;           // how many files and waste rows reports list
  std::vector<std::string> warnings;
  std::string working_dir;  // the config's WorkingDir
  // The config's Env, KEY=VALUE each (NVIDIA_REQUIRE_CUDA, CUDA_VERSION).
  std::vector<std::string> env;
  // Provenance: the first `base_layers` layers are the base image's; how
  // that was decided ("history", "--base-layers", "" for no base found).
  std::size_t base_layers = 0;
  std::string base_evidence;

  // The merged filesystem, and the captured package-database files that are
  // visible in it (the top layer's copy of each path), for attribution.
  std::shared_ptr<const MergedTree> tree;
  std::vector<CapturedFile> metadata;
  // The first bytes of files judged by their content (model formats), from
  // the layer whose copy is visible.
  std::vector<CapturedFile> file_heads;
  // The visible symbolic links the capture asked for (CaptureFn::keeps_link):
  // `content` is each one's target, as stored.
  std::vector<CapturedFile> links;
  std::vector<DuplicateGroup> duplicates;  // with --hash only; most bytes first

  std::uint64_t bytes_read = 0;  // from disk, to show what seeking saved
  double seconds = 0;
  std::string
      read_via;  // how the source was read: "tar", "docker storage (overlay2, tar-split)", ...
  std::string verified;  // what the bytes were checked against as they were read (BlobStore)
};

struct AnalyzeOptions {
  ImageSelector selector;
  std::size_t top = 10;
  unsigned threads = 0;  // 0: one per core
  ProgressFn progress;
  CaptureFn capture;             // package-database files to keep (attribution)
  bool hash_duplicates = false;  // digest files whose sizes collide (--hash)
  // Where the store reads local files, the first layer is merged on this
  // thread while others read it, when its blob is at least this large (or
  // of unknown size): below it, starting a thread costs more than the
  // overlap saves (a one-layer image of a few files starts 0.4 ms sooner).
  std::uint64_t merge_while_reading_from = std::uint64_t{1} << 20;
  // How many layers are the base image's (--base-layers); unset: read
  // from the config's history.
  std::optional<std::size_t> base_layers;
};

// Marks the first `count` layers as the base image's (clamped to the
// layer count), with how that was decided.
void set_base_layers(Analysis& analysis, std::size_t count, std::string evidence);

// Resolves and analyses the image in `store`, which was opened with
// options.capture and, for --hash, a stream digest of every file (see
// src/inputs/, which turns what the user typed into a store). Sets
// everything but Analysis::source. Throws InputError.
Analysis analyze_store(const BlobStore& store, const AnalyzeOptions& options);

// A string field of an image config ("" when absent or not a string).
std::string config_string(const nlohmann::json& config, const char* key);
// created_by for each of `layers` layers, from the config's history;
// what does not add up becomes a warning.
std::vector<std::string> created_by_per_layer(const nlohmann::json& config, std::size_t layers,
                                              std::vector<std::string>& warnings);

// --manifest-only: what a registry's manifest and config say about an
// image, with no layer downloaded.
struct ManifestLayer {
  std::string digest;
  std::uint64_t compressed_bytes = 0;
  std::string created_by;
};

struct ManifestReport {
  std::string source;  // the reference, normalised
  std::vector<std::string> tags;
  std::string platform;  // os/architecture[/variant] from the config
  std::string config_digest;
  std::string created;
  std::vector<ManifestLayer> layers;
  std::uint64_t compressed_bytes = 0;  // the layers' sum
  std::vector<std::string> warnings;
  std::uint64_t bytes_read = 0;  // from the network: manifests and config only
  double seconds = 0;
};

// A merge begun while the layers were read: `tree` holds the first
// `first_layer_entries` entries of the first layer and nothing else.
// `first_layer`, when set, recorded those same entries for dive's figures,
// and the first layer's scan may then lack them (LayerScan::entries_taken);
// without it, the scan must hold them all.
struct PartialMerge {
  std::shared_ptr<MergedTree> tree;
  std::size_t first_layer_entries = 0;
  std::shared_ptr<FirstLayerRecord> first_layer;
};

// The measuring half, on layers already scanned (used by analyze_image and by
// tests that assemble layers directly). The second form lets go of each
// scan as soon as it is measured.
Analysis analyze_layers(const ResolvedImage& image,
                        const std::vector<std::shared_ptr<const LayerScan>>& scans, std::size_t top,
                        PartialMerge started = {});
Analysis analyze_layers(const ResolvedImage& image,
                        std::vector<std::shared_ptr<const LayerScan>>&& scans, std::size_t top,
                        PartialMerge started = {});

}  // namespace imgsmith
