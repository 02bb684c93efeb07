// Renderers: the analysis as a human table or as imgsmith.analysis/v1 JSON.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "imgsmith/analysis.hpp"
#include "imgsmith/gate.hpp"

namespace imgsmith {

// What a report shows: the analysis, and when attribution ran, the
// categories and the findings.
struct Report {
  const Analysis& analysis;
  const Attribution* attribution = nullptr;
  const std::vector<Finding>* findings = nullptr;
  const GateResult& gate;
};

nlohmann::json report_to_json(const Report& report);
void render_text(const Report& report, std::ostream& out);
void render_markdown(const Report& report, std::ostream& out);
// One test case per gate rule; a report with no gate is one passing case.
void render_junit(const Report& report, std::ostream& out);

// --manifest-only: imgsmith.manifest/v1, or a table.
nlohmann::json manifest_to_json(const ManifestReport& report);
void render_manifest_text(const ManifestReport& report, std::ostream& out);

}  // namespace imgsmith
