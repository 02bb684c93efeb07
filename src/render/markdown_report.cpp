// Markdown for pull-request comments, and JUnit XML so CI systems show each
// gate as a test case.
#include <cstdio>
#include <sstream>
#include <variant>

#include "format.hpp"
#include "imgsmith/render.hpp"
#include "imgsmith/size.hpp"

namespace imgsmith {
namespace {


// Table cells cannot hold a bare pipe or a newline.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out.push_back(c);
  }
  return out;
}


std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

}  // namespace

void render_markdown(const Report& report, std::ostream& out) {
  const Analysis& a = report.analysis;
  std::string tags;
  for (const auto& t : a.tags) tags += (tags.empty() ? "" : ", ") + t;
  out << "### imgsmith: `" << (tags.empty() ? a.source : tags) << "`\n\n";
  if (!report.gate.checks.empty())
    out << (report.gate.passed ? "**Gate passed.**" : "**Gate failed.**") << "\n\n";
  out << "| | bytes | |\n| --- | ---: | --- |\n";
  out << "| final size | " << format_count(a.final_bytes) << " | " << format_size(a.final_bytes) << " |\n";
  out << "| wasted | " << format_count(a.wasted_bytes) << " | " << render_detail::percent(a.wasted_bytes, a.layers_bytes)
      << " of layer bytes |\n";
  if (a.compressed_bytes)
    out << "| compressed | " << format_count(*a.compressed_bytes) << " | " << format_size(*a.compressed_bytes)
        << " |\n";
  char eff[64];
  std::snprintf(eff, sizeof eff, "%.4f%%", 100.0 * a.dive.efficiency);
  out << "| dive efficiency | | " << eff << " |\n\n";

  if (report.attribution != nullptr) {
    out << "| category | bytes | share | largest children |\n| --- | ---: | ---: | --- |\n";
    for (const auto& c : report.attribution->categories) {
      if (c.bytes == 0) continue;
      std::string children;
      for (std::size_t i = 0; i < c.children.size() && i < 3; ++i)
        children += (i == 0 ? "" : ", ") + c.children[i].name + " " + format_size(c.children[i].bytes);
      out << "| " << c.name << " | " << format_size(c.bytes) << " | "
          << render_detail::percent(c.bytes, report.attribution->total_bytes) << " | " << cell(children) << " |\n";
    }
    out << "\n";
  }
  if (report.findings != nullptr && !report.findings->empty()) {
    out << "| finding | saves | fix |\n| --- | ---: | --- |\n";
    for (const auto& f : *report.findings)
      out << "| `" << f.id << "` " << cell(f.message) << " | " << format_size(f.bytes) << " | "
          << cell(f.fix) << " |\n";
    out << "\n";
  }
  if (!report.gate.checks.empty()) {
    out << "| rule | limit | actual | |\n| --- | ---: | ---: | --- |\n";
    for (const auto& c : report.gate.checks)
      out << "| " << c.rule << " | " << render_detail::gate_value(c.limit) << " | " << render_detail::gate_value(c.actual) << " | "
          << (c.passed ? "pass" : "**FAIL**") << " |\n";
  }
}

void render_junit(const Report& report, std::ostream& out) {
  const auto& checks = report.gate.checks;
  std::size_t failures = 0;
  for (const auto& c : checks) failures += c.passed ? 0 : 1;
  const std::string suite = xml("imgsmith analyze " + report.analysis.source);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites tests=\"" << std::max<std::size_t>(1, checks.size()) << "\" failures=\"" << failures
      << "\">\n";
  out << "  <testsuite name=\"" << suite << "\" tests=\"" << std::max<std::size_t>(1, checks.size())
      << "\" failures=\"" << failures << "\">\n";
  if (checks.empty())
    out << "    <testcase classname=\"imgsmith.gate\" name=\"analyze\"/>\n";
  for (const auto& c : checks) {
    out << "    <testcase classname=\"imgsmith.gate\" name=\"" << xml(c.rule) << "\"";
    if (c.passed) {
      out << "/>\n";
      continue;
    }
    out << ">\n      <failure message=\"" << xml(c.message) << "\">limit " << xml(render_detail::gate_value(c.limit))
        << ", actual " << xml(render_detail::gate_value(c.actual)) << "</failure>\n    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
}

}  // namespace imgsmith
