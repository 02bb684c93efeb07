#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "imgsmith/api/analyze.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/gate/gate.hpp"
#include "imgsmith/util/error.hpp"

using namespace imgsmith;

namespace {

Analysis sample() {
  Analysis a;
  a.layers_bytes = 1000;
  a.final_bytes = 800;
  a.wasted_bytes = 200;
  a.dive.efficiency = 0.8;
  a.dive.wasted_bytes = 300;
  a.dive.user_wasted_percent = 0.3;
  return a;
}

}  // namespace

TEST_CASE("gate: no rules passes with no checks") {
  const GateResult r = evaluate_gate(sample(), GateConfig{});
  CHECK(r.passed);
  CHECK(r.checks.empty());
}

TEST_CASE("gate: a limit equal to the actual value passes, one byte less fails") {
  GateConfig g;
  g.max_size = 800;
  CHECK(evaluate_gate(sample(), g).passed);
  g.max_size = 799;
  const GateResult r = evaluate_gate(sample(), g);
  CHECK_FALSE(r.passed);
  REQUIRE(r.checks.size() == 1);
  CHECK(r.checks[0].rule == "max-size");
  CHECK(std::get<std::uint64_t>(r.checks[0].actual) == 800);
  CHECK(std::get<std::uint64_t>(r.checks[0].limit) == 799);
  CHECK_THAT(r.checks[0].message, Catch::Contains("800") && Catch::Contains("799"));
}

TEST_CASE("gate: wasted as a percentage of layer bytes") {
  GateConfig g;
  g.max_wasted_percent = 20.0;
  CHECK(evaluate_gate(sample(), g).passed);
  g.max_wasted_percent = 19.9;
  CHECK_FALSE(evaluate_gate(sample(), g).passed);
}

TEST_CASE("gate: efficiency is a lower bound, user wasted an upper bound") {
  GateConfig g;
  g.min_efficiency = 0.8;
  g.max_user_wasted_percent = 0.3;
  CHECK(evaluate_gate(sample(), g).passed);
  g.min_efficiency = 0.81;
  g.max_user_wasted_percent = 0.29;
  const GateResult r = evaluate_gate(sample(), g);
  CHECK_FALSE(r.passed);
  CHECK(r.checks.size() == 2);
  for (const auto& c : r.checks) CHECK_FALSE(c.passed);
}

TEST_CASE("dive-ci: missing rules take dive's defaults, disabled values turn rules off") {
  GateConfig g;
  parse_dive_ci("rules:\n  highestWastedBytes: 20MB\n", "f", g);
  CHECK(g.dive_lowest_efficiency == 0.9);
  CHECK(g.dive_highest_user_wasted_percent == 0.1);
  CHECK(g.dive_highest_wasted_bytes == 20000000u);
  for (const char* off : {"disabled", "off", "false", "", "\"disabled\""}) {
    GateConfig h;
    parse_dive_ci(std::string("rules:\n  lowestEfficiency: ") + off +
                      "\n  highestUserWastedPercent: off # comment\n",
                  "f", h);
    CHECK_FALSE(h.dive_lowest_efficiency.has_value());
    CHECK_FALSE(h.dive_highest_user_wasted_percent.has_value());
    CHECK_FALSE(h.dive_highest_wasted_bytes.has_value());
  }
}

TEST_CASE("dive-ci: a ratio outside 0..1 or a bad size is a config error naming the file") {
  GateConfig g;
  CHECK_THROWS_WITH(parse_dive_ci("rules:\n  lowestEfficiency: 95\n", ".dive-ci", g),
                    Catch::Contains(".dive-ci") && Catch::Contains("lowestEfficiency"));
  CHECK_THROWS_AS(parse_dive_ci("rules:\n  highestUserWastedPercent: -0.1\n", "f", g), InputError);
  CHECK_THROWS_WITH(parse_dive_ci("rules:\n  highestWastedBytes: lots\n", "f", g),
                    Catch::Contains("highestWastedBytes"));
  CHECK_THROWS_AS(load_dive_ci("/nonexistent/.dive-ci", g), InputError);
}

TEST_CASE("dive-ci: keys outside rules and other rule names are ignored") {
  GateConfig g;
  parse_dive_ci(
      "plugins:\n  - p\nlowestEfficiency: 0.1\nrules:\n  other/rule: error\n"
      "  lowestEfficiency: '0.7'\n",
      "f", g);
  CHECK(g.dive_lowest_efficiency == 0.7);
}

TEST_CASE("gate: --ignore takes its paths' waste out of --max-wasted, not out of the sizes") {
  const auto run = [](const std::vector<Glob>& ignore) {
    AnalyzeRequest request;
    request.image = fixture("test-docker-image.tar");
    request.ignore = ignore;
    return analyze(request);
  };
  const AnalyzeResult all = run({});
  REQUIRE(all.analysis.wasted_bytes > 0);
  CHECK(all.analysis.ignored_waste_bytes == 0);
  const AnalyzeResult some = run({Glob("/root/**")});
  REQUIRE(some.analysis.ignored_waste_bytes > 0);
  std::uint64_t listed = 0;
  for (const auto& w : some.analysis.waste) {
    CHECK_FALSE(w.path.starts_with("/root/"));
    listed += w.bytes;
  }
  CHECK(some.analysis.wasted_bytes == all.analysis.wasted_bytes);  // a size figure
  CHECK(some.analysis.wasted_bytes - some.analysis.ignored_waste_bytes == listed);
  GateConfig g;
  g.max_wasted = listed;
  CHECK_FALSE(evaluate_gate(all.analysis, g).passed);
  const GateResult r = evaluate_gate(some.analysis, g);
  CHECK(r.passed);
  REQUIRE(r.checks.size() == 1);
  CHECK(std::get<std::uint64_t>(r.checks[0].actual) == listed);
}

TEST_CASE("analyze: the findings and the gates come from the same analysis as the attribution") {
  AnalyzeRequest request;
  request.image = fixture("test-docker-image.tar");
  request.floor = FindingFloor{0, 0.0};  // every finding significant: each one can fail a gate
  request.keep_files = true;
  request.gates.max_size = 1;
  request.gates.max_wasted = 1;
  request.gates.deny = finding_ids();
  const AnalyzeResult r = analyze(request);
  REQUIRE(r.analysis.final_bytes > 0);
  CHECK(r.models.empty());  // dive's fixtures hold no model

  // Attribution, run again on the result's analysis, places the same files
  // in the same categories as the streamed one did.
  const Attribution again = attribute(r.analysis, builtin_rules());
  REQUIRE(again.categories.size() == r.attribution.categories.size());
  for (std::size_t i = 0; i < again.categories.size(); ++i) {
    CHECK(r.attribution.categories[i].name == again.categories[i].name);
    CHECK(r.attribution.categories[i].bytes == again.categories[i].bytes);
  }
  REQUIRE(r.files.size() == again.files.size());
  std::uint64_t kept = 0, attributed = 0;
  for (const auto& f : r.files) kept += f.bytes;
  for (const auto& f : again.files) attributed += f.bytes;
  CHECK(kept == attributed);
  CHECK(kept == again.total_bytes);

  // The findings streamed from attribution are those of the same analysis.
  const std::vector<Finding> found = find_waste(r.analysis, again, {}, request.floor);
  REQUIRE_FALSE(found.empty());
  REQUIRE(found.size() == r.findings.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    CHECK(r.findings[i].id == found[i].id);
    CHECK(r.findings[i].bytes == found[i].bytes);
  }

  // Each gate read this analysis's figures and these findings.
  CHECK_FALSE(r.gate.passed);
  std::size_t denials = 0;
  for (const GateCheck& c : r.gate.checks) {
    INFO(c.rule);
    const std::uint64_t actual = std::get<std::uint64_t>(c.actual);
    if (c.rule == "max-size") {
      CHECK(actual == r.analysis.final_bytes);
    } else if (c.rule == "max-wasted") {
      CHECK(actual == r.analysis.wasted_bytes);
    } else {
      REQUIRE(c.rule.starts_with("deny:"));
      ++denials;
      std::uint64_t bytes = 0;
      for (const Finding& f : r.findings)
        if ("deny:" + f.id == c.rule) bytes = f.bytes;
      CHECK(actual == bytes);
      CHECK(c.passed == (bytes == 0));
    }
  }
  CHECK(denials == finding_ids().size());
}
