// Comparing two images: growth per category, child and layer, files that
// came, went or changed size, findings that appeared or went away. Both
// sides are imgsmith.analysis/v1 documents, so a baseline saved by an
// earlier CI run compares the same way as an image analysed now.
//
// Files are compared on sets where diff has them: an image analysed in this
// run gives every visible file (a FileSet). A saved report holds only its
// largest files, so against one diff never says a file is gone or new
// unless it knows: a file it cannot place is said to have entered or left
// that report's largest-files list.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "imgsmith/merged_tree.hpp"

namespace imgsmith {

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

// Builds the imgsmith.diff/v1 document. Throws InputError when either side
// is not an analysis report.
nlohmann::json diff_reports(const nlohmann::json& old_report, const nlohmann::json& new_report,
                            const DiffGate& gate, const DiffOptions& options = {});

void render_diff_text(const nlohmann::json& diff, std::ostream& out);
void render_diff_markdown(const nlohmann::json& diff, std::ostream& out);

}  // namespace imgsmith
