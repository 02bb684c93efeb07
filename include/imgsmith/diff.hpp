// Comparing two images: growth per category, child and layer, large files
// that came or went, findings that appeared or went away. Both sides are
// imgsmith.analysis/v1 documents, so a baseline saved by an earlier CI run
// compares the same way as an image analysed now.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace imgsmith {

struct DiffGate {
  std::optional<std::uint64_t> max_growth_bytes;
  std::optional<double> max_growth_percent;  // of the old final size
};

// Builds the imgsmith.diff/v1 document. Throws InputError when either side
// is not an analysis report.
nlohmann::json diff_reports(const nlohmann::json& old_report, const nlohmann::json& new_report,
                            const DiffGate& gate);

void render_diff_text(const nlohmann::json& diff, std::ostream& out);
void render_diff_markdown(const nlohmann::json& diff, std::ostream& out);

}  // namespace imgsmith
