// Comparing two images as one library call: each side is an image to
// analyse now (anything analyze reads) or a report saved earlier with
// `imgsmith analyze --format json`; the result is the comparison.
#pragma once

#include <optional>
#include <string>

#include "imgsmith/diff/diff.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/report/report.hpp"
#include "imgsmith/source/image.hpp"

namespace imgsmith {

struct DiffRequest {
  std::string old_input, new_input;  // an image, or a saved imgsmith.analysis/v1 report
  ImageSelector selector;            // which image of an index or archive (--platform)
  RegistryOptions registry;
  RuleSet rules = builtin_rules();
  DiffGate gate;         // --max-growth
  std::size_t top = 10;  // each list's length; the counts count all
  // Each stage of an image's analysis, as "INPUT: stage".
  ProgressFn progress;
};

// One side as diff compares it: its report, kept as a saved report keeps
// it, and every visible file when it is an image analysed now (a saved
// report lists only its largest files).
struct DiffSide {
  SavedReport report;
  std::optional<FileSet> files;
};

struct DiffResult {
  DiffSide old_side, new_side;
  DiffReport diff;
};

// Reads (or analyses) the old side, then the new, and compares them.
// Throws InputError for an input that is neither an image nor a saved
// report, or a report of another schema.
DiffResult diff(const DiffRequest& request);

}  // namespace imgsmith
