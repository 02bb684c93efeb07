#include "imgsmith/render/renderers.hpp"

#include <algorithm>

#include "imgsmith/render/render.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {

const std::vector<Renderer>& renderers() {
  // One row a format; its functions are in src/render/<name>_report.cpp.
  static const std::vector<Renderer> table = {
      {"text", "a table for a terminal or a bug report (the default)", render_text,
       render_diff_text},
      {"json", "the imgsmith.analysis/v1 document (diff: imgsmith.diff/v1)", render_json,
       render_diff_json},
      {"markdown", "tables for a pull-request comment", render_markdown, render_diff_markdown},
      {"junit", "JUnit XML, one test case per gate rule (analyze only)", render_junit, nullptr},
      {"csv", "every visible file (diff: the files that changed), a row each", render_csv,
       render_diff_csv, true},
      {"html",
       "one self-contained page: a treemap of the bytes, layers, findings (diff: what grew)",
       render_html, render_diff_html, true},
      {"ncdu", "the merged filesystem as ncdu's JSON export (ncdu -f, gdu -f; analyze only)",
       render_ncdu, nullptr, true},
      {"cyclonedx",
       "the software bill of materials as CycloneDX 1.5 JSON: every package the image's "
       "databases list, with its package URL (analyze only)",
       render_cyclonedx, nullptr},
      {"sarif",
       "SARIF 2.1.0 for GitHub code scanning: each finding and failed gate check a result at "
       "its path in the image (analyze only)",
       render_sarif, nullptr},
      {"gitlab-codequality",
       "GitLab's Code Quality report: each finding and failed gate check an issue with a "
       "stable fingerprint (analyze only)",
       render_codequality, nullptr},
  };
  return table;
}

namespace {

const Renderer* find_renderer(std::string_view name) {
  const auto& table = renderers();
  const auto it =
      std::find_if(table.begin(), table.end(), [&](const Renderer& r) { return r.name == name; });
  return it == table.end() ? nullptr : &*it;
}

}  // namespace

std::string format_error(std::string_view format, bool for_diff) {
  const Renderer* r = find_renderer(format);
  if (r != nullptr && (!for_diff || r->diff != nullptr)) return "";
  std::string names;
  for (const auto& row : renderers())
    if (!for_diff || row.diff != nullptr) names += (names.empty() ? "" : ", ") + row.name;
  if (r == nullptr) return "unknown format '" + std::string(format) + "' (one of: " + names + ")";
  return "format " + r->name + " is not available for diff (one of: " + names + ")";
}

std::string format_help(bool for_diff) {
  std::string help;
  for (const auto& r : renderers())
    if (!for_diff || r.diff != nullptr) {
      help += "\n  " + r.name + std::string(r.name.size() < 10 ? 10 - r.name.size() : 1, ' ') +
              r.description;
    }
  return help;
}

bool renderer_needs_files(std::string_view format) {
  const Renderer* r = find_renderer(format);
  return r != nullptr && r->needs_files;
}

void render_analysis(std::string_view format, const Report& report, std::ostream& out) {
  if (const std::string error = format_error(format, false); !error.empty())
    throw InputError(error);
  find_renderer(format)->analysis(report, out);
}

void render_diff(std::string_view format, const DiffReport& diff, std::ostream& out) {
  if (const std::string error = format_error(format, true); !error.empty()) throw InputError(error);
  find_renderer(format)->diff(diff, out);
}

}  // namespace imgsmith
