#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "imgsmith/attribution.hpp"
#include "imgsmith/diff.hpp"
#include "imgsmith/error.hpp"
#include "imgsmith/findings.hpp"
#include "imgsmith/render.hpp"

using namespace imgsmith;

namespace {

nlohmann::json report_of(const std::string& name) {
  AnalyzeOptions options;
  options.capture = is_package_database;
  const Analysis a = analyze_image(fixture(name), options);
  const Attribution attr = attribute(a, builtin_rules());
  const auto findings = find_waste(a, attr, {});
  const GateResult gate;
  // Through text and back, as a baseline file would be.
  return nlohmann::json::parse(report_to_json(Report{a, &attr, &findings, gate}).dump());
}

}  // namespace

TEST_CASE("diff: growth of the final size, per category and per finding") {
  const auto old_r = report_of("test-docker-image.tar");
  const auto new_r = report_of("test-kaniko-image.tar");
  const auto d = diff_reports(old_r, new_r, DiffGate{});
  CHECK(d["schema"] == "imgsmith.diff/v1");
  CHECK(d["size"]["final_bytes"]["old"] == 1188573);
  CHECK(d["size"]["final_bytes"]["new"] == 1280165);
  CHECK(d["size"]["final_bytes"]["delta"] == 1280165 - 1188573);
  std::int64_t category_deltas = 0;
  for (const auto& c : d["categories"]) category_deltas += c["delta"].get<std::int64_t>();
  CHECK(category_deltas == 1280165 - 1188573);
  CHECK(d["findings"]["appeared"].empty());
  REQUIRE(d["findings"]["changed"].size() == 2);
  CHECK(d["layers"]["shared"] == 0);
  CHECK(d["layers"]["added"].size() == 14);
  CHECK(d["gate"]["passed"] == true);
}

TEST_CASE("diff: an image against itself shows no change") {
  const auto r = report_of("test-docker-image.tar");
  const auto d = diff_reports(r, r, DiffGate{std::uint64_t{0}, 0.0});
  CHECK(d["size"]["final_bytes"]["delta"] == 0);
  CHECK(d["layers"]["shared"] == 14);
  CHECK(d["layers"]["added"].empty());
  CHECK(d["files"]["new_large"].empty());
  CHECK(d["findings"]["changed"].empty());
  CHECK(d["gate"]["passed"] == true);
}

TEST_CASE("diff: --max-growth in bytes and in percent") {
  const auto old_r = report_of("test-docker-image.tar");
  const auto new_r = report_of("test-kaniko-image.tar");
  CHECK(diff_reports(old_r, new_r, DiffGate{std::uint64_t{91592}, std::nullopt})["gate"]["passed"] == true);
  CHECK(diff_reports(old_r, new_r, DiffGate{std::uint64_t{91591}, std::nullopt})["gate"]["passed"] == false);
  CHECK(diff_reports(old_r, new_r, DiffGate{std::nullopt, 8.0})["gate"]["passed"] == true);
  CHECK(diff_reports(old_r, new_r, DiffGate{std::nullopt, 7.0})["gate"]["passed"] == false);
  // Shrinking always passes.
  CHECK(diff_reports(new_r, old_r, DiffGate{std::uint64_t{0}, 0.0})["gate"]["passed"] == true);
}

TEST_CASE("diff: a document that is not an analysis report is refused") {
  const auto r = report_of("test-docker-image.tar");
  CHECK_THROWS_AS(diff_reports(nlohmann::json{{"schema", "other"}}, r, DiffGate{}), InputError);
  CHECK_THROWS_AS(diff_reports(r, nlohmann::json::array(), DiffGate{}), InputError);
}
