#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "fixtures.hpp"
#include "image_builder.hpp"
#include "imgsmith/api/analyze.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/inputs/inputs.hpp"
#include "imgsmith/render/render.hpp"
#include "imgsmith/render/renderers.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/sha256.hpp"
#include "imgsmith/util/text.hpp"

using namespace imgsmith;
using imgsmith::testing::odd_names;

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

TEST_CASE("markdown: a created_by's markup characters are escaped, not rendered") {
  GateConfig g;
  Rendered r(g);
  Finding f = finding_of("metadata-only-readd");
  f.message = "layer 2 (RUN ./*script* _x_ [a](b) `c` ~d~ a|b &amp; <i>)";
  f.bytes = 10;
  r.findings = {f};
  std::ostringstream out;
  render_markdown(r.report(), out);
  const std::string md = out.str();
  CHECK_THAT(
      md, Catch::Contains(R"(RUN ./\*script\* \_x\_ \[a\](b) \`c\` \~d\~ a\|b &amp;amp; &lt;i>))"));
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

TEST_CASE("text: visible() shows controls and invalid bytes escaped, keeps the rest") {
  CHECK(visible("/usr/lib/x86_64-linux-gnu/libc.so.6") == "/usr/lib/x86_64-linux-gnu/libc.so.6");
  CHECK_FALSE(needs_escape("/plain ascii/name.txt"));
  CHECK(visible("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(visible("x\x1b[2J") == "x\\x1b[2J");
  CHECK(visible(std::string("nul\0", 4)) == "nul\\x00");
  CHECK(visible("del\x7f") == "del\\x7f");
  CHECK(visible("caf\xe9") == "caf\\xe9");                // Latin-1
  CHECK(visible("\xc0\xaf") == "\\xc0\\xaf");             // overlong
  CHECK(visible("\xed\xa0\x80") == "\\xed\\xa0\\x80");    // a surrogate
  CHECK(visible("cut\xc3") == "cut\\xc3");                // a sequence cut short
  CHECK(visible("csi\xc2\x9b") == "csi\\u{009b}");        // C1 control
  CHECK(visible("bidi\xe2\x80\xae") == "bidi\\u{202e}");  // right-to-left override
  CHECK(visible("zw\xe2\x80\x8bsp") == "zw\\u{200b}sp");  // zero-width space
  CHECK(visible("\xef\xbb\xbf"
                "bom") == "\\u{feff}bom");                                     // byte order mark
  CHECK(visible("rlm\xe2\x80\x8f") == "rlm\\u{200f}");                         // right-to-left mark
  CHECK(visible("alm\xd8\x9c") == "alm\\u{061c}");                             // Arabic letter mark
  CHECK(visible("soft\xc2\xadhy") == "soft\\u{00ad}hy");                       // soft hyphen
  CHECK(visible("wj\xe2\x81\xa0") == "wj\\u{2060}");                           // word joiner
  CHECK(visible("zwj\xe2\x80\x8d") == "zwj\\u{200d}");                         // zero-width joiner
  CHECK(visible("na\xc3\xafve \xe2\x82\xac") == "na\xc3\xafve \xe2\x82\xac");  // ordinary UTF-8
  CHECK(visible("back\\slash") == "back\\slash");
}

TEST_CASE("text: UTF-8 replacement, hex and shortening") {
  CHECK(is_valid_utf8("na\xc3\xafve"));
  CHECK_FALSE(is_valid_utf8("caf\xe9"));
  CHECK(utf8_replaced("caf\xe9!") == "caf\xef\xbf\xbd!");
  CHECK(utf8_replaced("ok") == "ok");
  CHECK(to_hex("\xe9t") == "e974");
  CHECK(from_hex("e974") == std::optional<std::string>("\xe9t"));
  CHECK(from_hex("E974") == std::optional<std::string>("\xe9t"));
  CHECK_FALSE(from_hex("e97").has_value());
  CHECK_FALSE(from_hex("zz").has_value());
  CHECK(shorten("abcdef", 10) == "abcdef");
  CHECK(shorten("abcdef", 5) == "ab...");
  CHECK(shorten("a\xc3\xa9"
                "bcd",
                5) == "a...");  // never half a character
  CHECK(
      is_valid_utf8(shorten("a\xc3\xa9"
                            "bcd",
                            5)));
}

namespace {

// The odd-names image, saved under a name that is itself odd.
struct OddRendered {
  testing::TempDir tmp;
  std::string source;
  Analysis analysis;
  Attribution attribution;
  std::vector<Finding> findings;
  GateResult gate;

  OddRendered() {
    source = tmp / "odd-\x1b[2J-\xe9.tar";
    testing::write_file(source, testing::docker25_save(testing::odd_names_image()));
    AnalyzeOptions options;
    options.capture = is_package_database;
    options.top = 100;
    analysis = analyze_image(source, options);
    attribution = attribute(analysis, builtin_rules());
    findings = find_waste(analysis, attribution, {});
    GateConfig g;
    g.max_size = 1;
    g.deny = {"deleted-in-later-layer"};
    gate = evaluate_gate(analysis, g, &attribution, &findings);
  }
  Report report() const { return Report{analysis, &attribution, &findings, gate}; }
};

// No raw control character but the line ends, no C1 control, no invalid
// byte: nothing a terminal or an XML parser could act on.
void check_inert(const std::string& text) {
  CHECK(is_valid_utf8(text));
  std::size_t raw = 0;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && c != '\n') || b == 0x7f) ++raw;
  }
  CHECK(raw == 0);
  CHECK(text.find("\xc2\x9b") == std::string::npos);
  CHECK(text.find("\xe2\x80\xae") == std::string::npos);
  CHECK(text.find("\xe2\x80\x8b") == std::string::npos);  // zero-width space
  CHECK(text.find("\xe2\x80\x8f") == std::string::npos);  // right-to-left mark
}

}  // namespace

TEST_CASE("json: file names that are not UTF-8 dump, and round-trip through path_bytes") {
  const OddRendered r;
  std::string dumped;
  REQUIRE_NOTHROW(dumped = report_to_json(r.report()).dump(2));
  const auto j = nlohmann::json::parse(dumped);
  CHECK(path_of(j, "source") == r.source);
  CHECK(j.contains("source_bytes"));

  std::map<std::string, nlohmann::json> largest;
  for (const auto& f : j.at("largest_files")) largest[path_of(f)] = f;
  for (const auto& name : odd_names()) {
    if (name.path == odd_names()[0].path) continue;  // deleted by layer 1
    INFO(visible(name.path));
    const auto it = largest.find("/" + name.path);
    REQUIRE(it != largest.end());
    CHECK(it->second.contains("path_bytes") == !name.valid_utf8);
    CHECK(is_valid_utf8(it->second.at("path").get<std::string>()));
  }
  CHECK(largest.count("/" + odd_names()[10].path) == 1);  // the 4,000-byte name

  // The Latin-1 name, deleted by layer 1, is waste and a finding's path.
  const std::string latin1 = "/" + odd_names()[0].path;
  bool in_waste = false, in_finding = false;
  for (const auto& w : j.at("waste"))
    if (path_of(w) == latin1) in_waste = w.at("path") == "/odd/latin1-caf\xef\xbf\xbd";
  for (const auto& f : j.at("findings"))
    for (const auto& p : f.at("paths")) in_finding = in_finding || path_of(p) == latin1;
  CHECK(in_waste);
  CHECK(in_finding);
  // The rewritten escape-sequence name is one of dive's inefficient paths.
  bool inefficient = false;
  for (const auto& p : j.at("dive").at("inefficient_paths"))
    inefficient = inefficient || path_of(p) == "/" + odd_names()[4].path;
  CHECK(inefficient);
  // created_by keeps its characters; a message that cut it mid-character
  // and a warning naming a Latin-1 hard link are valid UTF-8 too.
  CHECK(j.at("layers")[1].at("created_by").get<std::string>().find("\x1b[2J\r") !=
        std::string::npos);
  CHECK_THAT(j.at("warnings").dump(),
             Catch::Contains("link-\\ufffd") || Catch::Contains("link-\xef\xbf\xbd"));
}

TEST_CASE("text, markdown and junit: odd names and created_by are shown escaped, never raw") {
  const OddRendered r;
  std::ostringstream text, md, junit;
  render_text(r.report(), text);
  render_markdown(r.report(), md);
  render_junit(r.report(), junit);
  check_inert(text.str());
  check_inert(md.str());
  check_inert(junit.str());
  const std::string t = text.str();
  CHECK_THAT(t, Catch::Contains("/odd/new\\nline"));
  CHECK_THAT(t, Catch::Contains("/odd/carriage\\rreturn"));
  CHECK_THAT(t, Catch::Contains("/odd/tab\\there"));
  CHECK_THAT(t, Catch::Contains("/odd/esc\\x1b[2J\\x1b[31mred"));
  CHECK_THAT(t, Catch::Contains("/odd/bytes-\\xff\\xfe\\xc3"));
  CHECK_THAT(t, Catch::Contains("/odd/latin1-caf\\xe9"));
  CHECK_THAT(t, Catch::Contains("/odd/del\\x7f"));
  CHECK_THAT(t, Catch::Contains("/odd/c1-\\u{009b}2J"));
  CHECK_THAT(t, Catch::Contains("/odd/bidi-\\u{202e}txt.exe"));
  CHECK_THAT(t, Catch::Contains("/odd/na\xc3\xafve-\xc3\xbcnic\xc3\xb8"
                                "de"));
  CHECK_THAT(t, Catch::Contains("odd-\\x1b[2J-\\xe9.tar"));
  CHECK_THAT(t, Catch::Contains(odd_names()[10].path));  // the long name whole
  // A name's newline starts no line of its own.
  CHECK_THAT(t, !Catch::Contains("\nline"));
  // Markdown's source escapes the backslash and the bracket: it renders as \x1b[2J\rprintf.
  CHECK_THAT(md.str(), Catch::Contains(R"(\\x1b\[2J\\rprintf)"));
  CHECK_THAT(junit.str(), Catch::Contains("odd-\\x1b[2J-\\xe9.tar"));
}

TEST_CASE("json and text: every list is cut to --top, the totals count all") {
  testing::Image image;
  testing::Layer base, again;
  for (int i = 0; i < 30; ++i) {
    base.entries.push_back(
        testing::file("d/f" + std::to_string(i), 100 + static_cast<std::size_t>(i)));
    again.entries.push_back(
        testing::file("d/f" + std::to_string(i), 200 + static_cast<std::size_t>(i)));
  }
  image.layers = {base, again};
  testing::TempDir tmp;
  testing::write_file(tmp / "img.tar", testing::docker25_save(image));
  AnalyzeOptions options;
  options.capture = is_package_database;
  options.top = 5;
  const Analysis a = analyze_image(tmp / "img.tar", options);
  const Attribution attr = attribute(a, builtin_rules());
  const auto findings = find_waste(a, attr, {});
  const GateResult gate;
  const auto j = report_to_json(Report{a, &attr, &findings, gate});
  CHECK(j.at("dive").at("inefficient_paths").size() == 5);
  CHECK(j.at("dive").at("inefficient_paths_total") == 30);
  CHECK(j.at("dive").at("inefficient_paths")[0].at("path") == "/d/f29");
  CHECK(j.at("dive").at("wasted_bytes") == a.dive.wasted_bytes);
  CHECK(j.at("largest_files").size() == 5);
  CHECK(j.at("waste").size() == 5);
  for (const auto& f : j.at("findings")) CHECK(f.at("paths").size() <= 5);
  std::ostringstream text;
  render_text(Report{a, &attr, &findings, gate}, text);
  CHECK(count(text.str(), "overwritten layer") == 5);
}

namespace {

// A report as `analyze --format json` writes it.
std::string saved_json(const Report& report) {
  return report_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

// Written, read back and written again: the same bytes, and the same
// report in every other format.
void check_round_trip(const Report& report, bool same_text) {
  const std::string first = saved_json(report);
  const SavedReport back = report_from_json(nlohmann::json::parse(first));
  CHECK(saved_json(back.view()) == first);
  if (!same_text) return;
  for (const auto render : {render_text, render_markdown, render_junit}) {
    std::ostringstream before, after;
    render(report, before);
    render(back.view(), after);
    CHECK(after.str() == before.str());
  }
}

}  // namespace

TEST_CASE(
    "json: a saved report reads back into the structs it was written from (dive's fixtures)") {
  GateConfig g;
  g.max_size = 1000000;
  g.max_wasted_percent = 1.0;
  g.min_efficiency = 0.99;
  g.max_user_wasted_percent = 0.5;
  g.deny = {"deleted-in-later-layer"};
  for (const char* name :
       {"test-docker-image.tar", "test-kaniko-image.tar", "test-oci-estargz-image.tar",
        "test-oci-gzip-image.tar", "test-oci-uncompressed-image.tar", "test-oci-zstd-image.tar"}) {
    for (const std::size_t top : {std::size_t{10}, std::size_t{3}}) {
      INFO(name << " --top " << top);
      AnalyzeRequest request;
      request.image = fixture(name);
      request.options.top = top;
      request.gates = g;
      const AnalyzeResult r = analyze(request);
      check_round_trip(r.report(), true);
      check_round_trip(Report{r.analysis, nullptr, nullptr, GateResult{}}, true);
    }
  }
}

TEST_CASE("json: odd file names read back as their exact bytes") {
  const OddRendered r;
  check_round_trip(r.report(), false);
  const SavedReport back = report_from_json(report_to_json(r.report()));
  CHECK(back.analysis.source == r.source);
  REQUIRE(back.analysis.largest_files.size() == r.analysis.largest_files.size());
  for (std::size_t i = 0; i < r.analysis.largest_files.size(); ++i)
    CHECK(back.analysis.largest_files[i].path == r.analysis.largest_files[i].path);
  REQUIRE(back.analysis.waste.size() == r.analysis.waste.size());
  for (std::size_t i = 0; i < r.analysis.waste.size(); ++i)
    CHECK(back.analysis.waste[i].path == r.analysis.waste[i].path);
  REQUIRE(back.findings);
  CHECK(back.findings->size() == r.findings.size());
}

TEST_CASE("json: reading back refuses what is not an analysis report") {
  CHECK_THROWS_AS(report_from_json(nlohmann::json{{"schema", "imgsmith.diff/v1"}}), InputError);
  CHECK_THROWS_AS(report_from_json(nlohmann::json::array()), InputError);
  CHECK_THROWS_AS(report_from_json(nlohmann::json{{"schema", "imgsmith.analysis/v1"},
                                                  {"size", {{"final_bytes", "big"}}}}),
                  InputError);
  // A key an earlier imgsmith did not write reads as empty.
  const SavedReport r = report_from_json(nlohmann::json{{"schema", "imgsmith.analysis/v1"}});
  CHECK(r.analysis.final_bytes == 0);
  CHECK_FALSE(r.attribution);
  CHECK(r.gate.passed);
}

TEST_CASE("renderers: one table chooses the format for analyze and diff") {
  std::set<std::string> names;
  for (const auto& r : renderers()) {
    CHECK(names.insert(r.name).second);
    CHECK(r.analysis != nullptr);
    CHECK_FALSE(r.description.empty());
  }
  CHECK(renderers().front().name == "text");  // the default
  const Rendered r(GateConfig{});
  std::ostringstream json;
  render_analysis("json", r.report(), json);
  CHECK(json.str() == saved_json(r.report()));
  // A format without a diff renderer says so, by name.
  CHECK(format_error("junit", false).empty());
  CHECK_THAT(format_error("junit", true),
             Catch::StartsWith("format junit is not available for diff"));
  CHECK_THAT(format_error("yaml", false), Catch::StartsWith("unknown format 'yaml'"));
  std::ostringstream out;
  CHECK_THROWS_AS(render_diff("junit", DiffReport{}, out), InputError);
  CHECK_THROWS_AS(render_analysis("yaml", r.report(), out), InputError);
  CHECK_THAT(format_help(false), Catch::Contains("junit"));
  CHECK_THAT(format_help(true), !Catch::Contains("junit"));
}

TEST_CASE("csv: without the files (a saved report), the largest files, odd names escaped") {
  const OddRendered r;
  std::ostringstream out;
  render_analysis("csv", r.report(), out);
  std::istringstream lines(out.str());
  std::string line;
  REQUIRE(std::getline(lines, line));
  CHECK(line == "path,path_bytes,bytes,layer,category,child,origin");
  std::size_t rows = 0;
  std::map<std::string, std::string> hex_of;  // shown path -> path_bytes
  while (std::getline(lines, line)) {
    ++rows;
    const auto comma = line.find(',');
    hex_of[line.substr(0, comma)] = line.substr(comma + 1, line.find(',', comma + 1) - comma - 1);
  }
  CHECK(rows == r.analysis.largest_files.size());  // a newline in a name starts no row
  check_inert(out.str());
  CHECK(hex_of.at("/odd/new\\nline") == to_hex("/odd/new\nline"));
  CHECK(hex_of.at("/odd/bytes-\\xff\\xfe\\xc3") == to_hex("/" + odd_names()[5].path));
  CHECK(hex_of
            .at("/odd/na\xc3\xafve-\xc3\xbcnic\xc3\xb8"
                "de")
            .empty());  // valid and printable: as it is
}

namespace {

// Every file attribution kept, as the commands hand them to the formats
// that show every file.
std::vector<ReportFile> report_files(const Attribution& a) {
  std::vector<ReportFile> files;
  for (const AttributedFile& f : a.files)
    files.push_back(ReportFile{std::string(f.path), f.bytes, f.layer,
                               a.categories.at(f.category).name, f.child, f.origin});
  return files;
}

std::string between(const std::string& text, const std::string& open, const std::string& close) {
  const auto begin = text.find(open);
  if (begin == std::string::npos) return "";
  const auto end = text.find(close, begin + open.size());
  return end == std::string::npos ? ""
                                  : text.substr(begin + open.size(), end - begin - open.size());
}

// dive's fixture with every file kept, as the commands keep them for the
// formats that show every file.
struct RenderedWithFiles {
  Rendered r{GateConfig{}};
  std::vector<ReportFile> files = report_files(r.attribution);

  std::string render(const char* format) const {
    Report report = r.report();
    report.files = &files;
    std::ostringstream out;
    render_analysis(format, report, out);
    return out.str();
  }
};

}  // namespace

TEST_CASE("csv: with the files, every visible file once, and the bytes sum to final_bytes") {
  const RenderedWithFiles rendered;
  const Rendered& r = rendered.r;
  const auto& files = rendered.files;
  std::istringstream lines(rendered.render("csv"));
  std::string line;
  std::getline(lines, line);
  CHECK(line == "path,path_bytes,bytes,layer,category,child,origin");
  std::uint64_t sum = 0;
  std::size_t rows = 0;
  while (std::getline(lines, line)) {
    const auto fields = split(line, ",");
    REQUIRE(fields.size() == 7);
    sum += std::stoull(fields[2]);
    CHECK_FALSE(fields[4].empty());
    ++rows;
  }
  CHECK(rows == files.size());
  CHECK(sum == r.analysis.final_bytes);
}

namespace {

// The bytes of an ncdu export's directory node, its files' names in `names`.
std::uint64_t ncdu_total(const nlohmann::json& node, std::set<std::string>* names = nullptr) {
  if (!node.is_array()) {
    if (names != nullptr) names->insert(node.at("name").get<std::string>());
    return node.at("asize").get<std::uint64_t>();
  }
  std::uint64_t sum = 0;
  for (std::size_t i = 1; i < node.size(); ++i) sum += ncdu_total(node[i], names);
  return sum;
}

}  // namespace

TEST_CASE("ncdu: the export is ncdu's format, and its sizes sum to final_bytes") {
  const RenderedWithFiles rendered;
  const Rendered& r = rendered.r;
  const auto doc = nlohmann::json::parse(rendered.render("ncdu"));
  REQUIRE(doc.is_array());
  CHECK(doc.at(0) == 1);
  CHECK(doc.at(2).at("progname") == "imgsmith");
  CHECK(doc.at(3).at(0).at("name") == "/");
  CHECK(ncdu_total(doc.at(3)) == r.analysis.final_bytes);
  CHECK_FALSE(format_error("ncdu", true).empty());  // analyze only
}

namespace {

// The odd-names image in `format`, with every file kept, as the commands
// keep them for the formats that show every file.
std::string render_odd_with_files(const OddRendered& r, const char* format) {
  const auto files = report_files(r.attribution);
  Report report = r.report();
  report.files = &files;
  std::ostringstream out;
  render_analysis(format, report, out);
  return out.str();
}

}  // namespace

TEST_CASE("html: one file, its own script and style allowed by hash, names from the image inert") {
  const OddRendered r;
  const std::string page = render_odd_with_files(r, "html");
  // The policy names the exact script and style, and nothing may load.
  const std::string policy = between(page, "Content-Security-Policy\" content=\"", "\"");
  CHECK_THAT(policy, Catch::Contains("default-src 'none'"));
  CHECK_THAT(policy, Catch::Contains("connect-src 'none'"));
  const std::string script = between(page, "<script>", "</script>");
  REQUIRE_FALSE(script.empty());
  const auto raw = from_hex(sha256_digest(script).substr(7));  // after "sha256:"
  REQUIRE(raw);
  CHECK_THAT(policy, Catch::Contains("script-src 'sha256-" + base64_encode(*raw) + "'"));
  // No reference to anything outside the page.
  for (const char* outside : {"http://", "https://", "src=", "href=", "@import", "url("})
    CHECK(page.find(outside) == std::string::npos);
  // Exactly three script elements: two data blocks and the page's script;
  // the data blocks hold no '<' (a name cannot close them).
  CHECK(count(page, "<script") == 3);
  for (const char* id : {"imgsmith-report", "imgsmith-tree"}) {
    const std::string block = between(
        page, std::string("<script type=\"application/json\" id=\"") + id + "\">", "</script>");
    REQUIRE_FALSE(block.empty());
    CHECK(block.find('<') == std::string::npos);
    const auto doc = nlohmann::json::parse(block);
    CHECK_FALSE(doc.is_null());
  }
  // The tree's categories add up to the final size.
  const auto tree = nlohmann::json::parse(
      between(page, "<script type=\"application/json\" id=\"imgsmith-tree\">", "</script>"));
  std::uint64_t sum = 0;
  for (const auto& c : tree.at("k")) sum += c.at("b").get<std::uint64_t>();
  CHECK(sum == r.analysis.final_bytes);
  CHECK(is_valid_utf8(page));
  // Names are drawn as the text report shows them: the override, the
  // zero-width space and the mark as escapes (so "txt.exe" never shows as
  // "exe.txt"), a byte that is not UTF-8 from its exact bytes.
  check_inert(page);
  for (const char* shown : {"/odd/bidi-\\\\u{202e}txt.exe", "/odd/bytes-\\\\xff\\\\xfe\\\\xc3",
                            "odd/zero\\\\u{200b}width-\\\\u{feff}bom", "esc\\\\x1b[2J"})
    CHECK_THAT(page, Catch::Contains(shown));
}

TEST_CASE("ncdu: odd names shown as escapes in a file of ASCII, and the total still final_bytes") {
  const OddRendered r;
  const std::string text = render_odd_with_files(r, "ncdu");
  for (const char c : text) CHECK(static_cast<unsigned char>(c) < 0x7f);
  const auto doc = nlohmann::json::parse(text);
  std::set<std::string> names;
  CHECK(ncdu_total(doc.at(3), &names) == r.analysis.final_bytes);
  CHECK(names.count("bidi-\\u{202e}txt.exe") == 1);
  CHECK(names.count("bytes-\\xff\\xfe\\xc3") == 1);
  CHECK(names.count("del\\x7f") == 1);
}

TEST_CASE("csv: a text field that would start a formula is made inert, its bytes kept in hex") {
  const RenderedWithFiles rendered;
  std::vector<ReportFile> files = rendered.files;
  REQUIRE(files.size() >= 2);
  files[0].child = "=HYPERLINK(\"http://x\",\"y\")";
  files[1].child = "@SUM(1+1)";
  files[1].origin = "-2+3";
  Report report = rendered.r.report();
  report.files = &files;
  std::ostringstream out;
  render_analysis("csv", report, out);
  const std::string csv = out.str();
  CHECK_THAT(csv, Catch::Contains(",\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\","));
  CHECK_THAT(csv, Catch::Contains(",'@SUM(1+1),'-2+3\n"));
  for (const auto& line : split(csv, "\n"))
    for (const auto& cell : split(line, ","))
      CHECK(
          (cell.empty() || std::string_view("=+-@").find(cell.front()) == std::string_view::npos));
}

TEST_CASE("text: a finding lists as many of its paths as --top left, like every format") {
  const Analysis a;
  std::vector<Finding> findings(1);
  findings[0].id = "pip-cache";
  findings[0].bytes = 600;
  findings[0].message = "pip's cache";
  findings[0].fix = "use a cache mount";
  for (int i = 0; i < 6; ++i)
    findings[0].paths.push_back(FindingPath{"/root/.cache/pip/file" + std::to_string(i), 100});
  std::ostringstream text;
  render_text(Report{a, nullptr, &findings, GateResult{}}, text);
  for (const auto& p : findings[0].paths) CHECK_THAT(text.str(), Catch::Contains(p.path));
}

TEST_CASE("diff text: growth from nothing is new, ten times or more a factor, else a percent") {
  const auto final_line = [](std::uint64_t old_bytes, std::uint64_t new_bytes) {
    DiffReport d;
    d.final_bytes = SizeChange{old_bytes, new_bytes};
    std::ostringstream out;
    render_diff("text", d, out);
    const std::string text = out.str();
    const auto at = text.find("  final");
    return text.substr(at, text.find('\n', at) - at);
  };
  CHECK_THAT(final_line(0, 0), Catch::EndsWith("0.0%"));
  CHECK_THAT(final_line(0, 5), Catch::EndsWith("new"));
  CHECK_THAT(final_line(1000, 1077), Catch::EndsWith("+7.7%"));
  CHECK_THAT(final_line(1000, 500), Catch::EndsWith("-50.0%"));
  CHECK_THAT(final_line(23, 10000000), Catch::EndsWith("x434,783"));
  CHECK_THAT(final_line(100, 1000), Catch::EndsWith("x10"));
}
