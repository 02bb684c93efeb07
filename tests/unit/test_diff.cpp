#include <catch2/catch.hpp>
#include <sstream>
#include <tuple>

#include "fixtures.hpp"
#include "image_builder.hpp"
#include "imgsmith/api/diff.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/diff/diff.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/render/renderers.hpp"
#include "imgsmith/source/entry_listing.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

using namespace imgsmith;

namespace {

SavedReport report_of(const std::string& name) {
  AnalyzeOptions options;
  options.capture = is_package_database;
  const Analysis a = analyze_image(fixture(name), options);
  const Attribution attr = attribute(a, builtin_rules());
  const auto findings = find_waste(a, attr, {});
  const GateResult gate;
  // Through text and back, as a baseline file would be.
  return report_from_json(
      nlohmann::json::parse(report_to_json(Report{a, &attr, &findings, gate}).dump()));
}

// The imgsmith.diff/v1 document of two reports.
nlohmann::json diff_json(const SavedReport& old_r, const SavedReport& new_r, const DiffGate& gate,
                         const DiffOptions& options = {}) {
  return diff_to_json(diff_reports(old_r.view(), new_r.view(), gate, options));
}

}  // namespace

TEST_CASE("diff: growth of the final size, per category and per finding") {
  const auto old_r = report_of("test-docker-image.tar");
  const auto new_r = report_of("test-kaniko-image.tar");
  const auto d = diff_json(old_r, new_r, DiffGate{});
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
  // The same Dockerfile built by docker and by kaniko: two steps give the
  // same files with other bytes (timestamps), the rest differ.
  CHECK(d["layers"]["rebuilt"].size() == 2);
  CHECK(d["layers"]["added"].size() == 12);
  CHECK(d["layers"]["removed"].size() == 12);
  CHECK(d["gate"]["passed"] == true);
}

TEST_CASE("diff: an image against itself shows no change") {
  // Two analyses of one image, not one report twice: each figure is there
  // on both sides, and equal.
  const auto r = report_of("test-docker-image.tar");
  const auto again = report_of("test-docker-image.tar");
  const auto d = diff_json(r, again, DiffGate{std::uint64_t{0}, 0.0});
  CHECK(d["size"]["final_bytes"]["old"] == 1188573);
  CHECK(d["size"]["final_bytes"]["new"] == 1188573);
  for (const char* size : {"final_bytes", "layers_bytes", "wasted_bytes"}) {
    INFO(size);
    CHECK(d["size"][size]["old"].get<std::uint64_t>() > 0);
    CHECK(d["size"][size]["new"] == d["size"][size]["old"]);
    CHECK(d["size"][size]["delta"] == 0);
  }
  std::uint64_t category_bytes = 0;
  REQUIRE(!d["categories"].empty());
  for (const auto& c : d["categories"]) {
    INFO(c["name"]);
    CHECK(c["new"] == c["old"]);
    CHECK(c["delta"] == 0);
    CHECK(c["children"].empty());  // only the children that changed are listed
    category_bytes += c["old"].get<std::uint64_t>();
  }
  CHECK(category_bytes == 1188573);
  CHECK(d["layers"]["shared"] == 14);
  CHECK(d["layers"]["added"].empty());
  CHECK(d["layers"]["removed"].empty());
  for (const char* list : {"added", "removed", "resized", "entered_largest", "left_largest"}) {
    INFO(list);
    CHECK(d["files"][list].empty());
    CHECK(d["files"]["counts"][list] == 0);
  }
  for (const char* list : {"appeared", "gone", "changed"}) CHECK(d["findings"][list].empty());
  // A limit of no growth at all, in bytes and in percent, passes at exactly 0.
  CHECK(d["gate"]["passed"] == true);
  REQUIRE(d["gate"]["checks"].size() == 2);
  for (const auto& c : d["gate"]["checks"]) {
    INFO(c["rule"]);
    CHECK(c["actual"] == 0);
    CHECK(c["passed"] == true);
  }
}

TEST_CASE("diff: --max-growth in bytes and in percent") {
  const auto old_r = report_of("test-docker-image.tar");
  const auto new_r = report_of("test-kaniko-image.tar");
  CHECK(diff_json(old_r, new_r, DiffGate{std::uint64_t{91592}, std::nullopt})["gate"]["passed"] ==
        true);
  CHECK(diff_json(old_r, new_r, DiffGate{std::uint64_t{91591}, std::nullopt})["gate"]["passed"] ==
        false);
  CHECK(diff_json(old_r, new_r, DiffGate{std::nullopt, 8.0})["gate"]["passed"] == true);
  CHECK(diff_json(old_r, new_r, DiffGate{std::nullopt, 7.0})["gate"]["passed"] == false);
  // Shrinking always passes.
  CHECK(diff_json(new_r, old_r, DiffGate{std::uint64_t{0}, 0.0})["gate"]["passed"] == true);
}

TEST_CASE("diff: a document that is not an analysis report is refused") {
  CHECK_THROWS_AS(report_from_json(nlohmann::json{{"schema", "other"}}), InputError);
  CHECK_THROWS_AS(report_from_json(nlohmann::json::array()), InputError);
}

namespace {

using namespace imgsmith::testing;

// An image analysed now: its report, as a saved baseline would read back,
// and its every file.
struct Analysed {
  SavedReport report;
  FileSet files;
};

Analysed analysed(const Image& image, std::size_t top) {
  TempDir tmp;
  write_file(tmp / "img.tar", docker25_save(image));
  AnalyzeOptions options;
  options.capture = is_package_database;
  options.top = top;
  const Analysis a = analyze_image(tmp / "img.tar", options);
  const Attribution attr = attribute(a, builtin_rules());
  const auto findings = find_waste(a, attr, {});
  const GateResult gate;
  return {report_from_json(
              nlohmann::json::parse(report_to_json(Report{a, &attr, &findings, gate}).dump())),
          file_set(*a.tree)};
}

std::vector<std::string> paths(const nlohmann::json& list) {
  std::vector<std::string> out;
  for (const auto& item : list) out.push_back(path_of(item));
  return out;
}

using Paths = std::vector<std::string>;

// v1: a 5000, gone 4500, b 4000, c 3000, d 2000, e 1000.
// v2: n1 6000, n2 5500, a, b, c unchanged, d 2500, e unchanged; gone removed.
Image version(int v) {
  Image image;
  Layer l;
  l.entries = {file("a", 5000), file("b", 4000), file("c", 3000), file("e", 1000)};
  if (v == 1) {
    l.entries.push_back(file("gone", 4500));
    l.entries.push_back(file("d", 2000));
  } else {
    l.entries.push_back(file("n1", 6000));
    l.entries.push_back(file("n2", 5500));
    l.entries.push_back(file("d", 2500));
  }
  image.layers = {l};
  return image;
}

}  // namespace

TEST_CASE("diff: two saved reports never call a file gone that only left the other's list") {
  // Saved with --top 4: v1 lists a, gone, b, c; v2 lists n1, n2, a, b.
  const auto old_r = analysed(version(1), 4).report, new_r = analysed(version(2), 4).report;
  const auto f = diff_json(old_r, new_r, DiffGate{})["files"];
  CHECK(f["old_complete"] == false);
  CHECK(f["new_complete"] == false);
  CHECK(f["removed"].empty());
  CHECK(f["added"].empty());
  // c (3000) is still there: v2's list ends at 4000, so its absence says nothing.
  // gone (4500) would be in v2's list at its old size: it left it.
  CHECK(paths(f["left_largest"]) == Paths{"/gone"});
  CHECK(paths(f["entered_largest"]) == Paths{"/n1", "/n2"});
  CHECK(f["resized"].empty());
  std::ostringstream text;
  render_diff_text(diff_reports(old_r.view(), new_r.view(), DiffGate{}), text);
  CHECK_THAT(text.str(), Catch::Contains("/gone  left the new report's largest-4 list"));
  CHECK_THAT(text.str(), !Catch::Contains("- 3.00 kB  /c"));
}

TEST_CASE("diff: images analysed now are compared file by file, then cut to --top") {
  const auto old_a = analysed(version(1), 2), new_a = analysed(version(2), 2);
  DiffOptions o;
  o.old_files = &old_a.files;
  o.new_files = &new_a.files;
  o.top = 10;
  auto f = diff_json(old_a.report, new_a.report, DiffGate{}, o)["files"];
  CHECK(f["old_complete"] == true);
  CHECK(paths(f["added"]) == Paths{"/n1", "/n2"});
  CHECK(f["added_bytes"] == 11500);
  CHECK(paths(f["removed"]) == Paths{"/gone"});
  REQUIRE(paths(f["resized"]) == Paths{"/d"});
  CHECK(f["resized"][0]["delta"] == 500);
  CHECK(f["entered_largest"].empty());
  CHECK(f["left_largest"].empty());
  o.top = 1;
  f = diff_json(old_a.report, new_a.report, DiffGate{}, o)["files"];
  CHECK(paths(f["added"]) == Paths{"/n1"});
  CHECK(f["counts"]["added"] == 2);
  CHECK(f["added_bytes"] == 11500);
}

TEST_CASE("diff: an image analysed twice, compared file by file, has no changed file") {
  const auto one = analysed(version(1), 2), two = analysed(version(1), 2);
  DiffOptions o;
  o.old_files = &one.files;
  o.new_files = &two.files;
  REQUIRE(one.files.files.size() == 6);
  const auto f = diff_json(one.report, two.report, DiffGate{}, o)["files"];
  CHECK(f["old_complete"] == true);
  CHECK(f["new_complete"] == true);
  for (const char* list : {"added", "removed", "resized", "entered_largest", "left_largest"}) {
    INFO(list);
    CHECK(f[list].empty());
    CHECK(f["counts"][list] == 0);
  }
  CHECK(f["added_bytes"] == 0);
  CHECK(f["removed_bytes"] == 0);
}

TEST_CASE("diff: a saved baseline against an image analysed now") {
  const auto old_r = analysed(version(1), 4).report;  // lists a, gone, b, c
  const auto new_a = analysed(version(2), 4);
  DiffOptions o;
  o.new_files = &new_a.files;
  const auto f = diff_json(old_r, new_a.report, DiffGate{}, o)["files"];
  CHECK(paths(f["removed"]) == Paths{"/gone"});  // known: the new image has every file
  CHECK(f["added"].empty());                     // the baseline cannot say n1 is new...
  CHECK(paths(f["entered_largest"]) == Paths{"/n1", "/n2"});  // ...only that it was not that large
  CHECK(f["resized"].empty());                                // d is not in the baseline's list
}

TEST_CASE("diff: odd file names read back from a saved report through path_bytes") {
  const auto old_r = analysed(odd_names_image(), 100).report;
  Image next = odd_names_image();
  next.layers.push_back(Layer{{whiteout(odd_names()[4].path)}});  // the escape-sequence name goes
  const auto new_a = analysed(next, 100);
  DiffOptions o;
  o.new_files = &new_a.files;
  const auto d = nlohmann::json::parse(diff_json(old_r, new_a.report, DiffGate{}, o).dump());
  // The Latin-1-free but invalid name "odd/bytes-\xff\xfe\xc3" matches
  // itself only when read back through path_bytes.
  CHECK(paths(d["files"]["removed"]) == Paths{"/" + odd_names()[4].path});
  CHECK(d["files"]["resized"].empty());
  CHECK(d["files"]["entered_largest"].empty());
  // Both ways: image against image, the invalid name in the JSON diff.
  Image fewer = odd_names_image();
  fewer.layers.push_back(Layer{{whiteout(odd_names()[5].path)}});
  const auto old_a = analysed(odd_names_image(), 100), fewer_a = analysed(fewer, 100);
  o.old_files = &old_a.files;
  o.new_files = &fewer_a.files;
  const DiffReport typed = diff_reports(old_a.report.view(), fewer_a.report.view(), DiffGate{}, o);
  const auto e = nlohmann::json::parse(diff_to_json(typed).dump());
  REQUIRE(e["files"]["removed"].size() == 1);
  CHECK(e["files"]["removed"][0]["path_bytes"] == to_hex("/" + odd_names()[5].path));
  CHECK(path_of(e["files"]["removed"][0]) == "/" + odd_names()[5].path);
  std::ostringstream text;
  render_diff_text(typed, text);
  CHECK_THAT(text.str(), Catch::Contains("/odd/bytes-\\xff\\xfe\\xc3"));
  CHECK(is_valid_utf8(text.str()));
}

TEST_CASE("diff: csv, a row per changed file") {
  const auto old_a = analysed(version(1), 2), new_a = analysed(version(2), 2);
  DiffOptions o;
  o.old_files = &old_a.files;
  o.new_files = &new_a.files;
  std::ostringstream out;
  render_diff("csv", diff_reports(old_a.report.view(), new_a.report.view(), DiffGate{}, o), out);
  CHECK(out.str() ==
        "change,path,path_bytes,old_bytes,new_bytes,hard_link\n"
        "added,/n1,,,6000,false\n"
        "added,/n2,,,5500,false\n"
        "removed,/gone,,4500,,false\n"
        "resized,/d,,2000,2500,false\n");
  // Against a saved report: only what its list shows.
  o.old_files = nullptr;
  std::ostringstream partial;
  render_diff(
      "csv",
      diff_reports(analysed(version(1), 4).report.view(), new_a.report.view(), DiffGate{}, o),
      partial);
  CHECK_THAT(partial.str(), Catch::Contains("entered_largest,/n1,,,6000,false\n"));
}

TEST_CASE("diff: an image against itself through the library shares every layer and file") {
  DiffRequest request;
  request.old_input = request.new_input = fixture("test-docker-image.tar");
  request.gate.max_growth_bytes = 0;
  const DiffResult r = diff(request);
  // Both sides analysed now: every visible file known, kept as a saved
  // report keeps it.
  REQUIRE(r.old_side.files);
  REQUIRE(r.new_side.files);
  REQUIRE_FALSE(r.new_side.files->files.empty());
  CHECK(r.old_side.files->files.size() == r.new_side.files->files.size());
  for (const DiffSide* side : {&r.old_side, &r.new_side}) {
    CHECK(side->report.analysis.tree == nullptr);
    CHECK(side->report.analysis.metadata.empty());
    CHECK(side->report.analysis.waste.size() <= request.top);
    REQUIRE(side->report.attribution);
    REQUIRE(side->report.findings);
  }
  const DiffReport& d = r.diff;
  CHECK(d.files.old_complete);
  CHECK(d.files.new_complete);
  CHECK(d.layers.shared == 14);
  CHECK(d.layers.shared == r.new_side.report.analysis.layers.size());
  CHECK(d.layers.added.empty());
  CHECK(d.layers.removed.empty());
  CHECK(d.final_bytes.new_bytes == r.new_side.report.analysis.final_bytes);
  CHECK(d.final_bytes.new_bytes > 0);
  CHECK(d.final_bytes.delta() == 0);
  CHECK(d.layers_bytes.delta() == 0);
  CHECK(d.wasted_bytes.delta() == 0);
  for (const FileChanges::List* list : {&d.files.added, &d.files.removed, &d.files.resized,
                                        &d.files.entered_largest, &d.files.left_largest}) {
    CHECK(list->count == 0);
    CHECK(list->top.empty());
  }
  CHECK(d.files.added_bytes == 0);
  CHECK(d.files.removed_bytes == 0);
  REQUIRE_FALSE(d.categories.empty());
  for (const CategoryChange& c : d.categories) {
    INFO(c.name);
    CHECK(c.bytes.delta() == 0);
    CHECK(c.children.empty());
  }
  CHECK(d.findings.appeared.empty());
  CHECK(d.findings.gone.empty());
  CHECK(d.findings.changed.empty());
  REQUIRE(d.checks.size() == 1);
  CHECK(d.checks[0].passed);
  CHECK(d.passed);
}

TEST_CASE("diff: one image saved by docker save, as OCI gzip and as OCI zstd shares every layer") {
  using namespace imgsmith::testing;
  TempDir tmp;
  const auto image_as = [](Encoding encoding) {
    Image image;
    image.layers = {
        Layer{{file("etc/base", 70000, 'b')}, encoding},
        Layer{{file("app/main.py", 5000, 'm'), file("app/model.bin", 90000, 'w')}, encoding},
        Layer{{whiteout("etc/base")}, encoding}};
    return image;
  };
  write_file(tmp / "save.tar", docker_legacy_save(image_as(Encoding::None)));
  write_file(tmp / "gzip.tar", containerd_save(image_as(Encoding::Gzip)));
  write_file(tmp / "zstd.tar", containerd_save(image_as(Encoding::Zstd)));
  const std::vector<std::string> saves = {tmp / "save.tar", tmp / "gzip.tar", tmp / "zstd.tar"};
  for (const auto& old_save : saves)
    for (const auto& new_save : saves) {
      if (old_save == new_save) continue;
      INFO(old_save << " against " << new_save);
      DiffRequest request;
      request.old_input = old_save;
      request.new_input = new_save;
      const DiffResult r = diff(request);
      // Stored under other digests, the same content.
      CHECK(r.old_side.report.analysis.layers[1].digest !=
            r.new_side.report.analysis.layers[1].digest);
      CHECK(r.diff.layers.shared == 3);
      CHECK(r.diff.layers.added.empty());
      CHECK(r.diff.layers.removed.empty());
      CHECK(r.diff.final_bytes.delta() == 0);
      CHECK(r.diff.files.added.count == 0);
      CHECK(r.diff.files.removed.count == 0);
      CHECK(r.diff.files.resized.count == 0);
    }
}

TEST_CASE("diff: a layer matched by digest where a saved report lacks the diff_id") {
  Analysis old_a, new_a;
  old_a.layers.resize(2);
  new_a.layers.resize(2);
  old_a.layers[0].digest = "sha256:aaa";  // an older report: digests only
  old_a.layers[1].digest = "sha256:bbb";
  new_a.layers[0].digest = "sha256:aaa";
  new_a.layers[0].diff_id = "sha256:111";
  new_a.layers[1].digest = "sha256:ccc";
  new_a.layers[1].diff_id = "sha256:222";
  const LayerChanges c = diff_layers(old_a, new_a);
  CHECK(c.shared == 1);
  REQUIRE(c.added.size() == 1);
  CHECK(c.added[0].digest == "sha256:ccc");
  REQUIRE(c.removed.size() == 1);
  CHECK(c.removed[0].digest == "sha256:bbb");
}

TEST_CASE("diff: a layer with the same files by name and size but other bytes is rebuilt") {
  using namespace imgsmith::testing;
  TempDir tmp;
  // The same step run again: one file's bytes differ at the same size, and
  // the entries come in another order. A layer whose file grew is added
  // and removed; the unchanged base layer is shared.
  Image before, after;
  before.layers = {Layer{{file("etc/base", 70000, 'b')}, Encoding::Gzip, true, "FROM debian"},
                   Layer{{dir("app"), file("app/main.py", 5000, 'm'), soft_link("app/l", "main.py"),
                          file("app/build-stamp", 40, '1')},
                         Encoding::Gzip,
                         true,
                         "COPY . /app"},
                   Layer{{file("opt/data.bin", 9000, 'd')}, Encoding::Gzip, true, "RUN fetch"}};
  after.layers = {before.layers[0],
                  Layer{{file("app/build-stamp", 40, '2'), soft_link("app/l", "main.py"),
                         file("app/main.py", 5000, 'm'), dir("app")},
                        Encoding::Gzip,
                        true,
                        "COPY . /app"},
                  Layer{{file("opt/data.bin", 9001, 'd')}, Encoding::Gzip, true, "RUN fetch"}};
  write_file(tmp / "before.tar", containerd_save(before));
  write_file(tmp / "after.tar", containerd_save(after));
  DiffRequest request;
  request.old_input = tmp / "before.tar";
  request.new_input = tmp / "after.tar";
  const DiffResult r = diff(request);
  const auto& old_layers = r.old_side.report.analysis.layers;
  const auto& new_layers = r.new_side.report.analysis.layers;
  REQUIRE(old_layers.size() == 3);
  REQUIRE(new_layers.size() == 3);
  CHECK(old_layers[1].diff_id != new_layers[1].diff_id);
  CHECK(old_layers[1].listing == new_layers[1].listing);
  CHECK(old_layers[2].listing != new_layers[2].listing);
  CHECK(old_layers[0].listing != old_layers[1].listing);
  CHECK(r.diff.layers.shared == 1);
  REQUIRE(r.diff.layers.rebuilt.size() == 1);
  CHECK(r.diff.layers.rebuilt[0].created_by == "COPY . /app");
  REQUIRE(r.diff.layers.added.size() == 1);
  CHECK(r.diff.layers.added[0].created_by == "RUN fetch");
  CHECK(r.diff.layers.removed.size() == 1);

  std::ostringstream text;
  render_diff_text(r.diff, text);
  CHECK_THAT(text.str(), Catch::Contains("1 shared, 1 rebuilt (the same files by name and size, "
                                         "other bytes), 1 added, 1 removed"));
  CHECK_THAT(text.str(), Catch::Contains("= 5.04 kB  COPY . /app"));
  const auto doc = diff_to_json(r.diff);
  REQUIRE(doc["layers"]["rebuilt"].size() == 1);
  CHECK(doc["layers"]["rebuilt"][0]["created_by"] == "COPY . /app");

  // A saved report keeps the listing, so a baseline file matches the same way.
  const Report saved{r.old_side.report.analysis, nullptr, nullptr, GateResult{}};
  const SavedReport back = report_from_json(nlohmann::json::parse(report_to_json(saved).dump()));
  CHECK(back.analysis.layers[1].listing == old_layers[1].listing);
  const LayerChanges again = diff_layers(back.analysis, r.new_side.report.analysis);
  CHECK(again.shared == 1);
  CHECK(again.rebuilt.size() == 1);
}

TEST_CASE("diff: a listing counts every entry, its type, size and link") {
  const auto digest = [](std::initializer_list<std::tuple<int, const char*, int, const char*>> es) {
    EntryListing l;
    for (const auto& [type, path, size, link] : es)
      l.add(static_cast<std::uint8_t>(type), path, static_cast<std::uint64_t>(size), link);
    return l.digest();
  };
  CHECK(EntryListing().digest().empty());
  const std::string one = digest({{0, "a/b", 10, ""}});
  CHECK(one.starts_with("listing:"));
  CHECK(one.size() == 8 + 32);
  CHECK(digest({{0, "a/b", 10, ""}, {1, "a", 0, ""}}) ==
        digest({{1, "a", 0, ""}, {0, "a/b", 10, ""}}));
  CHECK(digest({{0, "a/b", 11, ""}}) != one);
  CHECK(digest({{2, "a/b", 10, ""}}) != one);
  CHECK(digest({{0, "a/c", 10, ""}}) != one);
  CHECK(digest({{2, "a/b", 0, "x"}}) != digest({{2, "a/b", 0, "y"}}));
  CHECK(digest({{0, "ab", 0, ""}}) != digest({{0, "a", 0, "b"}}));
  // An entry twice is not the entry once.
  CHECK(digest({{0, "a/b", 10, ""}, {0, "a/b", 10, ""}}) != one);
}

TEST_CASE("diff: packages added, removed and changed version, from images and saved reports") {
  using namespace imgsmith::testing;
  TempDir tmp;
  const auto image_with = [](const std::vector<std::pair<std::string, std::string>>& debs,
                             const std::string& pip_version) {
    std::string status;
    std::vector<Entry> entries;
    for (const auto& [name, version] : debs) {
      status += "Package: " + name + "\nStatus: install ok installed\nVersion: " + version + "\n\n";
      entries.push_back(
          file_with("var/lib/dpkg/info/" + name + ".list", "/usr/lib/" + name + "\n"));
      entries.push_back(file("usr/lib/" + name, 1000));
    }
    entries.push_back(file_with("var/lib/dpkg/status", status));
    const std::string site = "usr/lib/python3/site-packages/";
    const std::string info = "requests-" + pip_version + ".dist-info/";
    entries.push_back(file(site + "requests/__init__.py", 500));
    entries.push_back(
        file_with(site + info + "RECORD", "requests/__init__.py,,500\n" + info + "RECORD,,\n"));
    Image image;
    image.layers = {Layer{entries, Encoding::Gzip, true, "RUN apt-get install"}};
    return image;
  };
  write_file(tmp / "old.tar",
             docker_legacy_save(image_with(
                 {{"libssl3", "3.0.11-1"}, {"curl", "7.88.1-10"}, {"tzdata", "2024a"}}, "2.31.0")));
  write_file(
      tmp / "new.tar",
      docker_legacy_save(image_with(
          {{"libssl3", "3.0.13-1"}, {"tzdata", "2024a"}, {"libgomp1", "12.2.0-14"}}, "2.31.0")));
  DiffRequest request;
  request.old_input = tmp / "old.tar";
  request.new_input = tmp / "new.tar";
  const DiffResult r = diff(request);
  const PackageChanges& p = r.diff.packages;
  REQUIRE(p.known);
  REQUIRE(p.changed.size() == 1);
  CHECK(p.changed[0].installer == "apt");
  CHECK(p.changed[0].name == "libssl3");
  CHECK(p.changed[0].old_versions == "3.0.11-1");
  CHECK(p.changed[0].new_versions == "3.0.13-1");
  REQUIRE(p.added.size() == 1);
  CHECK(p.added[0].name == "libgomp1");
  CHECK(p.added[0].new_bytes == 1000);
  REQUIRE(p.removed.size() == 1);
  CHECK(p.removed[0].name == "curl");
  std::ostringstream text;
  render_diff_text(r.diff, text);
  CHECK_THAT(text.str(), Catch::Contains("PACKAGES  1 added, 1 removed, 1 changed version") &&
                             Catch::Contains("~ apt  libssl3 3.0.11-1 -> 3.0.13-1") &&
                             Catch::Contains("+ apt  libgomp1 12.2.0-14") &&
                             Catch::Contains("- apt  curl 7.88.1-10"));
  const auto doc = diff_to_json(r.diff);
  CHECK(doc["packages"]["changed"][0]["old_version"] == "3.0.11-1");

  // A saved report keeps its packages: the same changes against it.
  const Report old_view = r.old_side.report.view();
  const SavedReport saved =
      report_from_json(nlohmann::json::parse(report_to_json(old_view).dump()));
  const PackageChanges again = diff_packages(saved.view(), r.new_side.report.view());
  REQUIRE(again.known);
  CHECK(again.changed.size() == 1);
  CHECK(again.added.size() == 1);
  CHECK(again.removed.size() == 1);
  // One saved before packages were written: nothing is said of them.
  auto old_doc = nlohmann::json::parse(report_to_json(old_view).dump());
  old_doc.erase("packages");
  const SavedReport older = report_from_json(old_doc);
  const PackageChanges unknown = diff_packages(older.view(), r.new_side.report.view());
  CHECK_FALSE(unknown.known);
  CHECK(unknown.added.empty());
}
