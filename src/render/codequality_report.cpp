// GitLab's Code Quality report (docs.gitlab.com, "Code Quality": a JSON
// array of issues, each with description, check_name, fingerprint,
// severity and location.path with location.lines.begin), which a job
// uploads as `artifacts: reports: codequality` so that a merge request
// shows what it adds or fixes. Each finding is one issue at its largest
// path in the image (relative to the image's root), each failed gate check
// one issue of severity critical; the fingerprint stays the same from
// pipeline to pipeline while the problem does, which is how GitLab tells a
// new issue from an old one.
#include <nlohmann/json.hpp>

#include "ci_results.hpp"
#include "imgsmith/render/render.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;
using render_detail::ResultWeight;

// GitLab's severities: info, minor, major, critical, blocker.
const char* severity_of(ResultWeight w) {
  switch (w) {
    case ResultWeight::info:
      return "info";
    case ResultWeight::waste:
      return "minor";
    case ResultWeight::defect:
      return "major";
    case ResultWeight::failed_gate:
      return "critical";
  }
  return "minor";
}

}  // namespace

void render_codequality(const Report& report, std::ostream& out) {
  json issues = json::array();
  for (const auto& r : render_detail::ci_results(report)) {
    // The path as the image names it, without the leading '/' (GitLab
    // shows it as a file of the project); "." for a result about the whole
    // image, as in SARIF (its name changes from run to run).
    const std::string_view path = render_detail::image_relative(r.path);
    json issue = {{"type", "issue"},
                  {"check_name", r.rule},
                  {"description", json_text(r.message)},
                  // Code Climate's category for what costs resources.
                  {"categories", json::array({"Performance"})},
                  {"severity", severity_of(r.weight)},
                  {"fingerprint", render_detail::fingerprint(r.identity)},
                  {"location", {{"path", json_text(path)}, {"lines", {{"begin", 1}}}}}};
    issues.push_back(std::move(issue));
  }
  out << issues.dump(2) << "\n";
}

}  // namespace imgsmith
