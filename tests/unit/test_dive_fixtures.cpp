// dive's own fixtures, with the figures dive's tests assert (docs/dive-metrics.md).
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/gate/gate.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "same_figures.hpp"

using namespace imgsmith;
using imgsmith::testing::check_same_dive_figures;

namespace {

const Analysis& dive_image() {
  static const Analysis a = analyze_image(fixture("test-docker-image.tar"), AnalyzeOptions{});
  return a;
}

std::vector<std::uint64_t> layer_bytes(const Analysis& a) {
  std::vector<std::uint64_t> out;
  for (const auto& l : a.layers) out.push_back(l.size_bytes);
  return out;
}

GateResult dive_ci(double efficiency, const std::string& wasted, double user_wasted) {
  GateConfig g;
  parse_dive_ci("rules:\n  lowestEfficiency: " + std::to_string(efficiency) +
                    "\n  highestWastedBytes: " + wasted +
                    "\n  highestUserWastedPercent: " + std::to_string(user_wasted) + "\n",
                "test", g);
  return evaluate_gate(dive_image(), g);
}

bool rule_failed(const GateResult& r, const std::string& rule) {
  for (const auto& c : r.checks)
    if (c.rule == rule) return !c.passed;
  FAIL("rule " << rule << " was not evaluated");
  return false;
}

}  // namespace

TEST_CASE("dive fixture: layers, entries and sizes match dive's") {
  const Analysis& a = dive_image();
  CHECK(a.format == "docker-save");
  CHECK(a.tags == std::vector<std::string>{"dive-test:latest"});
  CHECK(a.layers.size() == 14);
  CHECK(a.layer_entries == 451);
  CHECK(a.layers_bytes == 1220598);
  CHECK(layer_bytes(a) == std::vector<std::uint64_t>{1154361, 6405, 0, 6405, 6405, 6405, 6405, 6405,
                                                     6405, 0, 2187, 6405, 6405, 6405});
  CHECK(a.dive.user_size_bytes == 66237);
  CHECK_FALSE(a.compressed_bytes.has_value());
}

TEST_CASE("dive fixture: efficiency, wasted bytes and user wasted ratio are dive's exactly") {
  const Analysis& a = dive_image();
  CHECK(a.dive.efficiency == 0.9844212134184309);
  CHECK(a.dive.wasted_bytes == 32025);
  CHECK(a.dive.user_wasted_percent == 0.4834911001404049);
  REQUIRE(a.dive.inefficient.size() == 3);
  CHECK(a.dive.inefficient[0].path == "/root/example/somefile1.txt");
  CHECK(a.dive.inefficient[0].cumulative_bytes == 12810);
  CHECK(a.dive.inefficient[1].path == "/root/saved.txt");
  CHECK(a.dive.inefficient[1].cumulative_bytes == 12810);
  CHECK(a.dive.inefficient[2].path == "/root/example/somefile3.txt");
  CHECK(a.dive.inefficient[2].cumulative_bytes == 6405);
  for (const auto& p : a.dive.inefficient) CHECK(p.copies == 2);
}

TEST_CASE("dive fixture: final tree bytes match docker export, waste is the difference") {
  const Analysis& a = dive_image();
  CHECK(a.final_bytes == 1188573);
  CHECK(a.wasted_bytes == 32025);
  std::uint64_t listed = 0;
  for (const auto& w : a.waste) listed += w.bytes;
  CHECK(listed == a.wasted_bytes);
}

TEST_CASE("dive fixture: created_by skips empty-layer history entries") {
  const Analysis& a = dive_image();
  CHECK_THAT(a.layers[0].created_by, Catch::Contains("ADD file:ce026b62"));
  CHECK_THAT(a.layers[2].created_by, Catch::Contains("mkdir -p /root/example/really/nested"));
  CHECK_THAT(a.layers[13].created_by, Catch::Contains("chmod +x /root/saved.txt"));
  CHECK(a.warnings.empty());
}

TEST_CASE("dive CI evaluator: strict thresholds fail all three rules") {
  const GateResult r = dive_ci(0.99, "1B", 0.01);
  CHECK_FALSE(r.passed);
  CHECK(rule_failed(r, "dive:lowestEfficiency"));
  CHECK(rule_failed(r, "dive:highestWastedBytes"));
  CHECK(rule_failed(r, "dive:highestUserWastedPercent"));
}

TEST_CASE("dive CI evaluator: loose thresholds pass all three rules") {
  const GateResult r = dive_ci(0.9, "50kB", 0.5);
  CHECK(r.passed);
  CHECK(r.checks.size() == 3);
}

TEST_CASE("dive CI evaluator: only the wasted-bytes rule fails at 1B") {
  const GateResult r = dive_ci(0.9, "1B", 0.5);
  CHECK_FALSE(r.passed);
  CHECK_FALSE(rule_failed(r, "dive:lowestEfficiency"));
  CHECK(rule_failed(r, "dive:highestWastedBytes"));
  CHECK_FALSE(rule_failed(r, "dive:highestUserWastedPercent"));
}

TEST_CASE("kaniko fixture: gzip layers give dive's sizes and their compressed bytes") {
  const Analysis a = analyze_image(fixture("test-kaniko-image.tar"), AnalyzeOptions{});
  CHECK(a.layers_bytes == 1326410);
  CHECK(layer_bytes(a) == std::vector<std::uint64_t>{1231733, 9249, 0, 9249, 9249, 9249, 9249, 9249,
                                                     9249, 0, 2187, 9249, 9249, 9249});
  CHECK(a.wasted_bytes == 46245);
  REQUIRE(a.compressed_bytes.has_value());
  std::uint64_t blobs = 0;
  for (const auto& l : a.layers) {
    CHECK(l.compression == "gzip");
    REQUIRE(l.compressed_bytes.has_value());
    blobs += *l.compressed_bytes;
  }
  CHECK(*a.compressed_bytes == blobs);
  CHECK(*a.compressed_bytes == 764655 + 3822 + 181 + 3878 + 3878 + 3879 + 3879 + 3915 + 3851 + 164 +
                                   1341 + 3862 + 3882 + 3850);
}

TEST_CASE("OCI fixtures: one 11,189-byte file in every layer encoding") {
  for (const auto& [name, encoding] : std::vector<std::pair<std::string, std::string>>{
           {"uncompressed", "none"}, {"gzip", "gzip"}, {"zstd", "zstd"}, {"estargz", "gzip"}}) {
    INFO(name);
    const Analysis a = analyze_image(fixture("test-oci-" + name + "-image.tar"), AnalyzeOptions{});
    CHECK(a.format == "oci-archive");
    CHECK(a.architecture == "arm64");  // the only platform: analysed without --platform
    REQUIRE(a.layers.size() == 1);
    CHECK(a.layers[0].compression == encoding);
    CHECK(a.final_bytes == 11189);
    CHECK(a.wasted_bytes == 0);
    CHECK(a.compressed_bytes.has_value() == (encoding != "none"));
  }
}

TEST_CASE("dive's .dive-ci fixture reads as 0.95, 20 MB and 0.5, and the image passes it") {
  GateConfig g;
  load_dive_ci(fixture(".dive-ci"), g);
  CHECK(g.dive_lowest_efficiency == 0.95);
  CHECK(g.dive_highest_wasted_bytes == 20000000u);
  CHECK(g.dive_highest_user_wasted_percent == 0.5);
  CHECK(evaluate_gate(dive_image(), g).passed);
}

TEST_CASE("the first layer merged while it is read, or after, gives the same figures") {
  for (const std::string name :
       {"test-docker-image.tar", "test-kaniko-image.tar", "test-oci-gzip-image.tar",
        "test-oci-uncompressed-image.tar", "test-oci-estargz-image.tar"}) {
    INFO(name);
    AnalyzeOptions during, after;
    during.merge_while_reading_from = 0;
    after.merge_while_reading_from = UINT64_MAX;
    const Analysis a = analyze_image(fixture(name), during);
    const Analysis b = analyze_image(fixture(name), after);
    CHECK(a.final_bytes == b.final_bytes);
    CHECK(a.final_entries == b.final_entries);
    CHECK(a.wasted_bytes == b.wasted_bytes);
    CHECK(layer_bytes(a) == layer_bytes(b));
    check_same_dive_figures(a.dive, b.dive);
  }
}
