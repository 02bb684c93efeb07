// imgsmith gen on the corpus (tests/gen-corpus/): small copies of the
// projects ML teams have, each with the decisions an expert would make in
// tests/gen-corpus/expected.tsv. Every column of every row is checked, and
// every Dockerfile gen renders passes the rule checker.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dockerfile_rules.hpp"
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"
#include "policy.hpp"

using namespace imgsmith;
using namespace imgsmith::gen;
namespace fs = std::filesystem;

namespace {

const fs::path kCorpus = fs::path(IMGSMITH_SOURCE_DIR) / "tests" / "gen-corpus";

struct Row {
  int line = 0;
  std::string project, options;
  int exit = 0;
  std::string image, flavor, cuda;
  int cudnn = 0;
  std::string cmd;
  int port = 0;
  std::string label() const {
    return "expected.tsv:" + std::to_string(line) + " " + project + " " + options;
  }
};

std::vector<Row> read_table() {
  std::ifstream in(kCorpus / "expected.tsv");
  REQUIRE(in);
  std::vector<Row> rows;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#' || line.rfind("project\t", 0) == 0) continue;
    const auto f = split(line, "\t");
    INFO("expected.tsv:" << number << ": " << line);
    REQUIRE(f.size() == 9);
    Row r;
    r.line = number;
    r.project = f[0];
    r.options = f[1];
    r.exit = std::stoi(f[2]);
    r.image = f[3];
    r.flavor = f[4];
    r.cuda = f[5];
    r.cudnn = r.exit == 0 ? std::stoi(f[6]) : 0;
    r.cmd = f[7];
    r.port = r.exit == 0 ? std::stoi(f[8]) : 0;
    rows.push_back(r);
  }
  return rows;
}

// "cuda=12.4,flavor=runtime" as gen's options (what the CLI flags set);
// --requirements and --context go to detection, in `requirements` and
// `context` (relative to the corpus).
Options options_of(const Row& r, std::string& requirements, fs::path& context) {
  Options o;
  o.flavor.clear();  // unset, as the CLI leaves it for imgsmith.toml
  if (r.options == "-") return o;
  for (const auto& kv : split(r.options, ",")) {
    const auto eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (key == "cuda")
      o.cuda = value;
    else if (key == "flavor")
      o.flavor = value;
    else if (key == "requirements")
      requirements = value;
    else if (key == "wheelhouse")
      o.wheelhouse = value;
    else if (key == "index_url")
      o.index_url = value;
    else if (key == "no_runtime_compiler")
      o.runtime_compiler = false;
    else if (key == "context")
      context = kCorpus / value;
    else
      FAIL(r.label() << ": unknown option " << key);
  }
  return o;
}

// What `imgsmith gen` does: the project's imgsmith.toml [gen] fills what
// the options left unset, then detection and the plan.
Plan plan_row(const Row& r) {
  std::string requirements;
  fs::path context;
  Options o = options_of(r, requirements, context);
  const fs::path dir = kCorpus / r.project;
  if (const auto policy = imgsmith::load_gen_policy(dir.string()))
    imgsmith::apply_gen_policy(*policy, o, requirements);
  if (o.flavor.empty()) o.flavor = "auto";
  return make_plan(detect_project(dir, requirements, context), o);
}

std::string cudnn_major(const Plan& p) {
  if (!p.cudnn || p.flavor == "base") return "0";
  // The tag says which cuDNN the image carries: cudnn8, cudnn9, or (from
  // 12.4.1) plain cudnn, which is 9.
  if (p.final_image.find("-cudnn8-") != std::string::npos) return "8";
  return "9";
}

// The CMD as the Dockerfile writes it, JSON form.
std::string json_words(const std::vector<std::string>& words) {
  std::string out = "[";
  for (const auto& w : words) {
    if (out.size() > 1) out += ", ";
    out += "\"";
    for (char c : w) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    out += "\"";
  }
  return out + "]";
}

}  // namespace

TEST_CASE("gen corpus: every project gets the decisions an expert would make") {
  const auto rows = read_table();
  CHECK(rows.size() >= 20);
  for (const auto& r : rows) {
    INFO(r.label());
    REQUIRE(fs::is_directory(kCorpus / r.project));
    if (r.exit == 2) {
      // A refusal: InputError is what the CLI turns into exit 2, with
      // nothing written.
      CHECK_THROWS_AS(render_plan(plan_row(r)), InputError);
      CHECK_THROWS_WITH(render_plan(plan_row(r)), Catch::Contains(r.image));
      continue;
    }
    REQUIRE(r.exit == 0);
    Plan plan;
    REQUIRE_NOTHROW(plan = plan_row(r));
    CHECK(plan.final_image == r.image);
    CHECK((plan.flavor.empty() ? std::string("cpu") : plan.flavor) == r.flavor);
    CHECK((plan.cuda.empty() ? std::string("-") : plan.cuda) == r.cuda);
    CHECK(cudnn_major(plan) == std::to_string(r.cudnn));
    CHECK(json_words(plan.cmd) == r.cmd);
    CHECK(plan.port == r.port);
    const Rendered rendered = render_plan(plan);
    imgsmith::test::RuleContext context;
    context.expect_probe = plan.probe;
    context.gpu = plan.gpu;
    context.source_before_deps = plan.source_before_deps;
    context.runtime_compiler = plan.runtime_compiler;
    context.declared_apt = plan.declared_apt;
    std::string broken;
    for (const auto& b : imgsmith::test::check_rules(rendered.dockerfile, context))
      broken += b + "\n";
    INFO(rendered.dockerfile);
    CHECK(broken == "");
    CHECK(rendered.dockerfile.find("CMD " + r.cmd + "\n") != std::string::npos);
    if (r.port != 0)
      CHECK(rendered.dockerfile.find("EXPOSE " + std::to_string(r.port) + "\n") !=
            std::string::npos);
  }
}

TEST_CASE("gen corpus: imgsmith.toml with a [gen] table still serves analyze") {
  // analyze reads the same file: the [gen] table must not make it refuse.
  const imgsmith::Policy policy =
      imgsmith::load_policy((kCorpus / "team-policy" / "imgsmith.toml").string());
  CHECK_FALSE(policy.max_size);
  const auto gen = imgsmith::load_gen_policy((kCorpus / "team-policy").string());
  REQUIRE(gen);
  CHECK(gen->extras == std::vector<std::string>{"gpu"});
  CHECK(gen->system_packages == std::vector<std::string>{"libgl1", "libglib2.0-0"});
  // No file above a project: no table.
  CHECK_FALSE(imgsmith::load_gen_policy((kCorpus / "sklearn-api").string()));
}
