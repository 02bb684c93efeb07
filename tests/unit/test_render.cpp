#include <catch2/catch.hpp>

#include <sstream>

#include "fixtures.hpp"
#include "imgsmith/attribution.hpp"
#include "imgsmith/findings.hpp"
#include "imgsmith/render.hpp"

using namespace imgsmith;

namespace {

struct Rendered {
  Analysis analysis;
  Attribution attribution;
  std::vector<Finding> findings;
  GateResult gate;

  explicit Rendered(const GateConfig& g) {
    AnalyzeOptions options;
    options.capture = is_package_database;
    analysis = analyze_image(fixture("test-docker-image.tar"), options);
    attribution = attribute(analysis, builtin_rules());
    findings = find_waste(analysis, attribution, {});
    gate = evaluate_gate(analysis, g, &attribution, &findings);
  }
  Report report() const { return Report{analysis, &attribution, &findings, gate}; }
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("junit: one test case per gate rule, failures carry limit and actual") {
  GateConfig g;
  g.max_size = 1000000;
  g.min_efficiency = 0.9;
  g.deny = {"deleted-in-later-layer"};
  const Rendered r(g);
  std::ostringstream out;
  render_junit(r.report(), out);
  const std::string xml = out.str();
  CHECK(count(xml, "<testcase ") == 3);
  CHECK(count(xml, "<failure ") == 2);
  CHECK_THAT(xml, Catch::Contains("tests=\"3\" failures=\"2\""));
  CHECK_THAT(xml, Catch::Contains("name=\"max-size\"") && Catch::Contains("actual 1,188,573 B"));
}

TEST_CASE("junit: a report without gates is one passing case") {
  const Rendered r(GateConfig{});
  std::ostringstream out;
  render_junit(r.report(), out);
  CHECK(count(out.str(), "<testcase ") == 1);
  CHECK(count(out.str(), "<failure") == 0);
}

TEST_CASE("markdown: totals, categories, findings and the gate as tables") {
  GateConfig g;
  g.max_size = 2000000;
  const Rendered r(g);
  std::ostringstream out;
  render_markdown(r.report(), out);
  const std::string md = out.str();
  CHECK_THAT(md, Catch::Contains("**Gate passed.**"));
  CHECK_THAT(md, Catch::Contains("| final size | 1,188,573 |"));
  CHECK_THAT(md, Catch::Contains("| other |"));
  CHECK_THAT(md, Catch::Contains("`deleted-in-later-layer`"));
  CHECK_THAT(md, Catch::Contains("| max-size | 2,000,000 B | 1,188,573 B | pass |"));
}

TEST_CASE("json: categories and findings are in the report") {
  const Rendered r(GateConfig{});
  const auto j = report_to_json(r.report());
  std::uint64_t sum = 0;
  for (const auto& c : j.at("categories")) sum += c.at("bytes").get<std::uint64_t>();
  CHECK(sum == j.at("size").at("final_bytes").get<std::uint64_t>());
  REQUIRE(j.at("findings").size() == 2);
  CHECK(j.at("findings")[0].at("id") == "deleted-in-later-layer");
  CHECK(j.at("findings")[0].at("bytes") == 19215);
  CHECK(j.at("findings")[1].at("bytes") == 12810);
}
