// What analyze.cpp shares with the pieces it calls, and nothing outside the
// analysis needs: the scans of an image's layers (scan_scheduler.cpp), the
// duplicate files (duplicates.cpp) and the largest files (largest_files.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/analysis/merged_tree.hpp"

namespace imgsmith {

// Hands the first layer's entries to the merge while it is scanned.
class FirstLayerFeed;

// Scans each blob, the first error rethrown once all have stopped; with a
// feed, the first blob's entries go to it as they are read.
std::vector<std::shared_ptr<const LayerScan>> scan_blobs(const BlobStore& store,
                                                         const std::vector<std::string>& blobs,
                                                         const std::vector<CaptureFn>& hash,
                                                         const AnalyzeOptions& options,
                                                         const char* what,
                                                         FirstLayerFeed* feed = nullptr);

// The scan of each layer of the image, each distinct blob scanned once.
std::vector<std::shared_ptr<const LayerScan>> scan_all(const BlobStore& store,
                                                       const ResolvedImage& image,
                                                       const AnalyzeOptions& options,
                                                       PartialMerge& started);

// Groups of visible files with the same content (--hash), most wasteful first.
std::vector<DuplicateGroup> find_duplicates(
    const BlobStore& store, const ResolvedImage& image,
    const std::vector<std::shared_ptr<const LayerScan>>& scans, const MergedTree& tree,
    const AnalyzeOptions& options);

// Adds the `top` largest files of one entry type below `node` to `heap`.
void collect_largest(const FileNode& node, std::span<const MergedTree::Inode> inodes,
                     EntryType pass, std::vector<bool>& seen, std::vector<FileReport>& heap,
                     std::size_t top);

}  // namespace imgsmith
