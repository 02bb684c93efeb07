// Renderers: a report (report.hpp) or a diff (diff.hpp) as a table, JSON,
// Markdown or JUnit XML.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/diff/diff.hpp"
#include "imgsmith/report/report.hpp"

namespace imgsmith {

// File names are bytes, and JSON strings must be UTF-8. Every renderer and
// report_from_json use one escaping: `path` is always valid UTF-8, each byte
// that is not part of a valid sequence shown as U+FFFD; when the name was
// not valid UTF-8, `path_bytes` beside it holds the name's raw bytes in hex,
// so the exact name can be recovered. Other image strings (created_by,
// tags, messages) are made valid UTF-8 the same way, with no _bytes field.
void put_path(nlohmann::json& item, std::string_view path, const std::string& key = "path");
// The raw name back: from `path_bytes` when present, else `path`.
std::string path_of(const nlohmann::json& item, const std::string& key = "path");
// A JSON string that dumps whatever bytes `s` holds.
nlohmann::json json_text(std::string_view s);

nlohmann::json report_to_json(const Report& report);
// A saved imgsmith.analysis/v1 document back into the structs it was written
// from: report_to_json(report_from_json(doc).view()) == doc for any document
// report_to_json wrote. Lists keep what the document lists (the analysis's
// `top` is the longest of them). A key the document lacks reads as empty or
// zero. Throws InputError for another schema or a value of the wrong type.
SavedReport report_from_json(const nlohmann::json& doc);

// Each format's renderers; renderers.hpp chooses among them by name.
void render_json(const Report& report, std::ostream& out);  // report_to_json, dumped
void render_text(const Report& report, std::ostream& out);
void render_markdown(const Report& report, std::ostream& out);
// One test case per gate rule; a report with no gate is one passing case.
void render_junit(const Report& report, std::ostream& out);

// The imgsmith.diff/v1 document.
nlohmann::json diff_to_json(const DiffReport& diff);
void render_diff_json(const DiffReport& diff, std::ostream& out);
void render_diff_text(const DiffReport& diff, std::ostream& out);
void render_diff_markdown(const DiffReport& diff, std::ostream& out);
void render_csv(const Report& report, std::ostream& out);
void render_diff_csv(const DiffReport& diff, std::ostream& out);
// One self-contained page (html_report.cpp): the data, script and style
// inline, a Content-Security-Policy that allows nothing else.
void render_html(const Report& report, std::ostream& out);
void render_diff_html(const DiffReport& diff, std::ostream& out);
// ncdu's JSON export of the merged filesystem (ncdu_report.cpp).
void render_ncdu(const Report& report, std::ostream& out);
// CycloneDX 1.5 JSON: the packages the image's databases list, with package URLs.
void render_cyclonedx(const Report& report, std::ostream& out);

// The code-scanning formats: each finding and each failed gate check as a
// result at its path in the image, with a fingerprint that stays the same
// from run to run. SARIF 2.1.0 as GitHub's code scanning takes it
// (sarif_report.cpp); GitLab's Code Quality report (codequality_report.cpp).
void render_sarif(const Report& report, std::ostream& out);
void render_codequality(const Report& report, std::ostream& out);
// A package's URL (the purl specification's, by its installer's type), and
// the group and name CycloneDX shows: `os_id` and `os_version` are
// os-release's ID and VERSION_ID, `arch` dpkg's Architecture; "" unknown.
struct PackageUrl {
  std::string group;  // an npm scope ("@next"), a Go module's path up to its name
  std::string name;
  std::string purl;  // "" for an installer with no purl type
};
PackageUrl package_url(const InstalledPackage& package, const std::string& os_id,
                       const std::string& os_version, const std::string& arch);

// --manifest-only: imgsmith.manifest/v1, or a table.
nlohmann::json manifest_to_json(const ManifestReport& report);
void render_manifest_text(const ManifestReport& report, std::ostream& out);

}  // namespace imgsmith
