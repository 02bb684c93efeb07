// JUnit XML, so that CI systems show each gate rule as a test case.
#include <algorithm>

#include "format.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

// XML 1.0 allows no control character but tab and newlines, even escaped:
// visible() leaves none.
std::string xml(const std::string& s) { return render_detail::escape_markup(visible(s)); }

}  // namespace

void render_junit(const Report& report, std::ostream& out) {
  const auto& checks = report.gate.checks;
  std::size_t failures = 0;
  for (const auto& c : checks) failures += c.passed ? 0 : 1;
  const std::string suite = xml("imgsmith analyze " + report.analysis.source);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites tests=\"" << std::max<std::size_t>(1, checks.size()) << "\" failures=\""
      << failures << "\">\n";
  out << "  <testsuite name=\"" << suite << "\" tests=\"" << std::max<std::size_t>(1, checks.size())
      << "\" failures=\"" << failures << "\">\n";
  if (checks.empty()) out << "    <testcase classname=\"imgsmith.gate\" name=\"analyze\"/>\n";
  for (const auto& c : checks) {
    out << "    <testcase classname=\"imgsmith.gate\" name=\"" << xml(c.rule) << "\"";
    if (c.passed) {
      out << "/>\n";
      continue;
    }
    out << ">\n      <failure message=\"" << xml(c.message) << "\">limit "
        << xml(render_detail::gate_value(c.limit)) << ", actual "
        << xml(render_detail::gate_value(c.actual)) << "</failure>\n    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
}

}  // namespace imgsmith
