// Comparing two images: growth per category, child and layer, files that
// came, went or changed size, findings that appeared or went away. Both
// sides are reports (report.hpp): an image analysed in this run and a
// baseline saved by an earlier CI run, read back, compare the same way.
//
// Files are compared on sets where diff has them: an image analysed in this
// run gives every visible file (a FileSet). A saved report holds only its
// largest files, so against one diff never says a file is gone or new
// unless it knows: a file it cannot place is said to have entered or left
// that report's largest-files list.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "imgsmith/report/report.hpp"

namespace imgsmith {

class MergedTree;  // analysis/merged_tree.hpp, included only where the tree is walked

struct DiffGate {
  std::optional<std::uint64_t> max_growth_bytes;
  std::optional<double> max_growth_percent;  // of the old final size
};

// Every visible regular file of an image (hard links by each name), with
// its size. `listed` marks the one name per content that a report's
// largest-files list would use (the regular-file entry's, as analyze picks).
struct FileSet {
  struct File {
    std::string path;  // raw bytes, "/usr/bin/env"
    std::uint64_t bytes = 0;
    bool listed = true;
  };
  std::vector<File> files;
};
FileSet file_set(const MergedTree& tree);

struct DiffOptions {
  const FileSet* old_files = nullptr;  // null: only the report's largest files are known
  const FileSet* new_files = nullptr;
  std::size_t top = 10;  // each file list is cut to this; the counts count all
};

// A figure on both sides.
struct SizeChange {
  std::uint64_t old_bytes = 0;
  std::uint64_t new_bytes = 0;
  std::int64_t delta() const {
    return static_cast<std::int64_t>(new_bytes) - static_cast<std::int64_t>(old_bytes);
  }
};

// Names (categories, children, origins, created_by) are as a saved report
// holds them, valid UTF-8, so that an image analysed now compares and shows
// as its saved report would; file names are their exact bytes.
struct ChildChange {
  std::string name;
  SizeChange bytes;
  // Where the child's bytes came from on each side (torch from pip before,
  // from apt after): both unset when neither side says.
  std::optional<std::map<std::string, std::uint64_t>> old_origins, new_origins;
};

struct CategoryChange {
  std::string name;
  SizeChange bytes;
  std::vector<ChildChange> children;  // the children that changed, largest change first
};

struct LayerChanges {
  std::size_t shared = 0;  // by content: diff_id, else digest
  // The new side's layers whose listing (EntryListing: names, types, sizes,
  // links) an old layer has, but not their bytes: the same step run again.
  std::vector<LayerReport> rebuilt;
  std::vector<LayerReport> added, removed;
};

// The layers both images hold (by diff_id, then by digest), those rebuilt
// (the same listing), and those only one has.
LayerChanges diff_layers(const Analysis& old_a, const Analysis& new_a);

struct FileChange {
  std::string path;             // raw bytes
  std::uint64_t old_bytes = 0;  // 0 on the side without it
  std::uint64_t new_bytes = 0;
  bool hard_link = false;  // another name of content listed under its first name
  std::uint64_t bytes() const { return std::max(old_bytes, new_bytes); }
  std::int64_t delta() const { return SizeChange{old_bytes, new_bytes}.delta(); }
};

struct FileChanges {
  // The largest `top` of a kind of change, and how many there were.
  struct List {
    std::size_t count = 0;
    std::vector<FileChange> top;
  };
  bool old_complete = false;  // every file of that side was known (an image analysed now)
  bool new_complete = false;
  std::size_t old_listed = 0;  // an incomplete side: how many files its report lists
  std::size_t new_listed = 0;
  std::uint64_t added_bytes = 0, removed_bytes = 0;  // of all, hard links counting none
  List added, removed, resized;
  List entered_largest, left_largest;  // against a saved report: only what its list shows
};

struct FindingChange {
  std::string id;
  SizeChange bytes;
};

struct FindingChanges {
  std::vector<FindingChange> appeared, gone, changed;  // by id
};

// A package by installer and name, whose versions differ between the sides:
// added (no old versions), removed (no new ones) or changed. A name
// installed at two versions at once (two venvs, nested node_modules) lists
// both, joined by ", ".
struct PackageChange {
  std::string installer, name;
  std::string old_versions, new_versions;
  std::uint64_t old_bytes = 0, new_bytes = 0;
};

struct PackageChanges {
  // Both sides list their packages: an image analysed now, or a report
  // saved by a version that writes them. Otherwise nothing is compared.
  bool known = false;
  std::vector<PackageChange> added, removed, changed;  // by installer and name
};

struct DiffCheck {
  std::string rule;
  std::variant<std::uint64_t, double> limit;
  std::variant<std::int64_t, double> actual;
  bool passed = true;
};

// What diff_reports finds; renderers show it (render.hpp), as JSON the
// imgsmith.diff/v1 document.
struct DiffReport {
  struct Side {
    std::string source;  // raw bytes
    std::vector<std::string> tags;
  };
  Side old_side, new_side;
  SizeChange final_bytes, layers_bytes, wasted_bytes,
      compressed_bytes;                    // compressed: 0 when unknown
  std::vector<CategoryChange> categories;  // the new side's order, then those only the old has
  LayerChanges layers;
  FileChanges files;
  FindingChanges findings;
  PackageChanges packages;
  bool passed = true;  // every check passed
  std::vector<DiffCheck> checks;
};

// The packages whose versions differ (not known when a side lists none).
PackageChanges diff_packages(const Report& old_report, const Report& new_report);

DiffReport diff_reports(const Report& old_report, const Report& new_report, const DiffGate& gate,
                        const DiffOptions& options = {});

}  // namespace imgsmith
