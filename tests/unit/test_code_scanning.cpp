// The code-scanning formats: SARIF 2.1.0 as GitHub's code scanning takes it
// and GitLab's Code Quality report. Every finding and every failed gate
// check is one result with a rule, a level, a location at its largest path
// (a valid relative URI that decodes back to the exact name) and a
// fingerprint that changes when the problem does and not otherwise.
#include <catch2/catch.hpp>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "analysed_image.hpp"
#include "imgsmith/gate/gate.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/render/renderers.hpp"

using namespace imgsmith;
using namespace imgsmith::testing;
using nlohmann::json;

namespace {

// A base layer, then a user's layer with a pip cache and two files a
// later layer deletes: one named with a space and a ':', one whose name is
// not UTF-8.
Image wasteful_image() {
  Image image;
  image.layers = {
      Layer{{file("usr/lib/libbase.so", 4000)}, Encoding::None, true, "FROM debian:bookworm"},
      Layer{{file("root/.cache/pip/http/a/b/c", 30000), file("data/big file:1.bin", 50000),
             file("data/caf\xe9.bin", 20000)},
            Encoding::None,
            true,
            "RUN pip install torch"},
      Layer{{whiteout("data/big file:1.bin"), whiteout("data/caf\xe9.bin")},
            Encoding::None,
            true,
            "RUN rm -f /data/*"}};
  return image;
}

struct ScanReports {
  json sarif;
  json codequality;
  std::vector<Finding> findings;
  GateResult gate;
};

ScanReports render_both(const Analysed& a, const GateConfig& config) {
  ScanReports r;
  r.findings = a.findings;
  r.gate = evaluate_gate(a.analysis, config, &a.attribution, &a.findings);
  const Report report{a.analysis, &a.attribution, &a.findings, r.gate};
  std::ostringstream sarif, codequality;
  render_analysis("sarif", report, sarif);
  render_analysis("gitlab-codequality", report, codequality);
  r.sarif = json::parse(sarif.str());
  r.codequality = json::parse(codequality.str());
  return r;
}

// RFC 3986's percent-decoding; refuses a character a URI cannot hold.
std::string uri_decoded(const std::string& uri) {
  std::string out;
  for (std::size_t i = 0; i < uri.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(uri[i]);
    if (c == '%') {
      REQUIRE(i + 2 < uri.size());
      out += static_cast<char>(std::stoi(uri.substr(i + 1, 2), nullptr, 16));
      i += 2;
      continue;
    }
    const bool allowed = std::isalnum(c) || std::string_view("-._~/").find(static_cast<char>(c)) !=
                                                std::string_view::npos;
    INFO("uri " << uri);
    REQUIRE(allowed);
    out += static_cast<char>(c);
  }
  return out;
}

const json* result_for(const json& results, const std::string& rule) {
  for (const auto& r : results)
    if (r["ruleId"] == rule) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("sarif: each finding a result at its largest path, with the rule GitHub needs") {
  const Analysed a(wasteful_image(), 1);
  REQUIRE(a.finding("pip-cache") != nullptr);
  REQUIRE(a.finding("deleted-in-later-layer") != nullptr);
  const ScanReports r = render_both(a, GateConfig{});
  const json& doc = r.sarif;
  CHECK(doc["version"] == "2.1.0");
  REQUIRE(doc["runs"].size() == 1);
  const json& run = doc["runs"][0];
  CHECK(run["tool"]["driver"]["name"] == "imgsmith");
  const json& rules = run["tool"]["driver"]["rules"];
  const json& results = run["results"];
  REQUIRE(results.size() == r.findings.size());
  std::set<std::string> rule_ids;
  for (const auto& rule : rules) {
    CHECK(rule_ids.insert(rule["id"].get<std::string>()).second);  // each rule once
    CHECK_FALSE(rule["shortDescription"]["text"].get<std::string>().empty());
    CHECK_FALSE(rule["fullDescription"]["text"].get<std::string>().empty());
    CHECK_FALSE(rule["help"]["text"].get<std::string>().empty());
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& result = results[i];
    const Finding& f = r.findings[i];
    CHECK(result["ruleId"] == f.id);
    REQUIRE(result["ruleIndex"].get<std::size_t>() < rules.size());
    CHECK(rules[result["ruleIndex"].get<std::size_t>()]["id"] == f.id);
    CHECK(result["level"] == (f.info ? "note" : "warning"));
    CHECK_FALSE(result["message"]["text"].get<std::string>().empty());
    CHECK(result["properties"]["bytes"] == f.bytes);
    REQUIRE(result["locations"].size() == 1);
    const json& place = result["locations"][0]["physicalLocation"];
    CHECK(place["region"]["startLine"] == 1);
    CHECK(place["artifactLocation"]["uriBaseId"] == "IMAGEROOT");
    // The largest path, relative to the image's root, decodes to its bytes.
    REQUIRE_FALSE(f.paths.empty());
    CHECK("/" + uri_decoded(place["artifactLocation"]["uri"]) == f.paths.front().path);
    // The layers that added the bytes, by index.
    REQUIRE_FALSE(f.layers.empty());
    const json& layers = result["locations"][0].at("logicalLocations");
    REQUIRE(layers.size() == f.layers.size());
    CHECK(layers[0]["name"] == "layer " + std::to_string(f.layers.front()));
    // Every further path a related location, each decoding to its name.
    const std::size_t related = f.paths.size() - 1;
    if (related == 0) {
      CHECK_FALSE(result.contains("relatedLocations"));
    } else {
      REQUIRE(result["relatedLocations"].size() == std::min<std::size_t>(related, 10));
      CHECK("/" +
                uri_decoded(
                    result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]) ==
            f.paths[1].path);
    }
  }
  // Both deleted files are the finding's paths, the name that is not UTF-8
  // among them, exact.
  const Finding& deleted = *a.finding("deleted-in-later-layer");
  std::set<std::string> deleted_paths;
  for (const auto& p : deleted.paths) deleted_paths.insert(p.path);
  CHECK(deleted_paths == std::set<std::string>{"/data/big file:1.bin", "/data/caf\xe9.bin"});
  const json* deletion = result_for(results, "deleted-in-later-layer");
  REQUIRE(deletion != nullptr);
  std::set<std::string> uris{
      "/" + uri_decoded((*deletion)["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]),
      "/" + uri_decoded(
                (*deletion)["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"])};
  CHECK(uris == deleted_paths);
}

TEST_CASE("sarif and codequality: a failed gate check is an error, a passed one no result") {
  const Analysed a(wasteful_image(), 1);
  GateConfig config;
  config.max_size = 1000;       // fails: the image holds more
  config.min_efficiency = 0.0;  // passes
  config.deny = {"pip-cache"};  // fails: the cache is there
  const ScanReports r = render_both(a, config);
  std::size_t failed = 0;
  for (const auto& c : r.gate.checks) failed += c.passed ? 0 : 1;
  REQUIRE(failed == 2);
  REQUIRE(r.gate.checks.size() == 3);
  const json& results = r.sarif["runs"][0]["results"];
  CHECK(results.size() == r.findings.size() + failed);
  const json* size_gate = result_for(results, "gate/max-size");
  REQUIRE(size_gate != nullptr);
  CHECK((*size_gate)["level"] == "error");
  CHECK_THAT((*size_gate)["message"]["text"].get<std::string>(), Catch::Contains("max-size"));
  const json* deny_gate = result_for(results, "gate/deny");
  REQUIRE(deny_gate != nullptr);
  CHECK_THAT((*deny_gate)["message"]["text"].get<std::string>(), Catch::Contains("pip-cache"));
  CHECK(result_for(results, "gate/min-efficiency") == nullptr);
  CHECK(r.sarif["runs"][0]["properties"]["gatePassed"] == false);

  std::size_t critical = 0;
  for (const auto& issue : r.codequality) critical += issue["severity"] == "critical" ? 1 : 0;
  CHECK(critical == failed);
  CHECK(r.codequality.size() == r.findings.size() + failed);
}

TEST_CASE("sarif and codequality: fingerprints are unique, and stable while the problem is") {
  const Analysed a(wasteful_image(), 1);
  GateConfig config;
  config.max_size = 1000;
  const ScanReports first = render_both(a, config);
  const ScanReports again = render_both(Analysed(wasteful_image(), 1), config);
  std::set<std::string> fingerprints;
  for (const auto& result : first.sarif["runs"][0]["results"])
    CHECK(fingerprints.insert(result["partialFingerprints"]["imgsmithResult/v1"].get<std::string>())
              .second);
  // The same results, the run's own properties aside (the image's name is a
  // new temporary file here, as a CI run tags its image anew).
  CHECK(first.sarif["runs"][0]["results"] == again.sarif["runs"][0]["results"]);
  CHECK(first.sarif["runs"][0]["tool"] == again.sarif["runs"][0]["tool"]);
  CHECK(first.codequality == again.codequality);

  // GitLab's fields, each issue's fingerprint the SARIF result's.
  REQUIRE(first.codequality.size() == first.sarif["runs"][0]["results"].size());
  const std::set<std::string> severities{"info", "minor", "major", "critical", "blocker"};
  for (std::size_t i = 0; i < first.codequality.size(); ++i) {
    const json& issue = first.codequality[i];
    CHECK(issue["check_name"] == first.sarif["runs"][0]["results"][i]["ruleId"]);
    CHECK(issue["fingerprint"] ==
          first.sarif["runs"][0]["results"][i]["partialFingerprints"]["imgsmithResult/v1"]);
    CHECK(severities.count(issue["severity"].get<std::string>()) == 1);
    CHECK_FALSE(issue["description"].get<std::string>().empty());
    CHECK_FALSE(issue["location"]["path"].get<std::string>().empty());
    CHECK(issue["location"]["lines"]["begin"] == 1);
  }

  // Another problem at another path: another fingerprint.
  Image moved = wasteful_image();
  moved.layers[1].entries[0] = file("root/.cache/pip/wheels/x/y", 30000);
  const ScanReports elsewhere = render_both(Analysed(moved, 1), config);
  const json* before = result_for(first.sarif["runs"][0]["results"], "pip-cache");
  const json* after = result_for(elsewhere.sarif["runs"][0]["results"], "pip-cache");
  REQUIRE(before != nullptr);
  REQUIRE(after != nullptr);
  CHECK((*before)["partialFingerprints"] != (*after)["partialFingerprints"]);
}

TEST_CASE("sarif and codequality: analyze only, and named in the format list") {
  CHECK(format_error("sarif", false).empty());
  CHECK(format_error("gitlab-codequality", false).empty());
  CHECK_THAT(format_error("sarif", true), Catch::Contains("not available for diff"));
  CHECK_THAT(format_help(false), Catch::Contains("sarif"));
  CHECK_THAT(format_help(false), Catch::Contains("gitlab-codequality"));
}
