#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "attribution_data.hpp"
#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/binary_modules.hpp"
#include "imgsmith/models/model_format.hpp"
#include "imgsmith/util/error.hpp"
#include "node_modules.hpp"

namespace imgsmith {

namespace {

using nlohmann::json;

std::vector<Glob> globs(const json& rule, const char* key, const std::string& where) {
  std::vector<Glob> out;
  const auto it = rule.find(key);
  if (it == rule.end()) return out;
  if (!it->is_array()) throw InputError(where + ": '" + key + "' must be a list of globs");
  for (const auto& g : *it) {
    if (!g.is_string()) throw InputError(where + ": '" + key + "' must be a list of globs");
    out.emplace_back(g.get<std::string>());
  }
  return out;
}

void parse_into(const json& doc, const std::string& label,
                const std::vector<std::string>& categories, std::vector<OriginRule>& origins,
                std::vector<AttributionRule>& rules) {
  if (!doc.is_object()) throw InputError(label + ": a rules file is a JSON object with \"rules\"");
  if (const auto o = doc.find("origins"); o != doc.end()) {
    if (!o->is_array()) throw InputError(label + ": \"origins\" must be a list");
    for (const auto& item : *o) {
      const std::string where = label + ": origin " + std::to_string(origins.size() + 1);
      if (!item.is_object() || !item.contains("origin") || !item["origin"].is_string())
        throw InputError(where + ": needs \"origin\" and \"paths\"");
      OriginRule rule{item["origin"].get<std::string>(), globs(item, "paths", where),
                      globs(item, "installers", where)};
      if (rule.paths.empty() && rule.installers.empty())
        throw InputError(where + ": needs \"paths\" or \"installers\"");
      origins.push_back(std::move(rule));
    }
  }
  const auto r = doc.find("rules");
  if (r == doc.end() || !r->is_array()) throw InputError(label + ": \"rules\" must be a list");
  for (std::size_t i = 0; i < r->size(); ++i) {
    const json& item = (*r)[i];
    const std::string where = label + ": rule " + std::to_string(i + 1);
    if (!item.is_object()) throw InputError(where + ": must be an object");
    AttributionRule rule;
    rule.source = label;
    if (!item.contains("category") || !item["category"].is_string())
      throw InputError(where + ": needs a \"category\"");
    rule.category = item["category"].get<std::string>();
    if (std::find(categories.begin(), categories.end(), rule.category) == categories.end()) {
      std::string names;
      for (const auto& c : categories) names += (names.empty() ? "" : ", ") + c;
      throw InputError(where + ": unknown category '" + rule.category + "' (one of: " + names +
                       ")");
    }
    rule.child = item.value("child", rule.category);
    rule.paths = globs(item, "paths", where);
    rule.python_dists = globs(item, "python_dists", where);
    rule.node_packages = globs(item, "node_packages", where);
    rule.deb_packages = globs(item, "deb_packages", where);
    rule.packages = globs(item, "packages", where);
    rule.installers = globs(item, "installers", where);
    rule.except_python_dists = globs(item, "except_python_dists", where);
    rule.except_packages = globs(item, "except_packages", where);
    rule.content = globs(item, "content", where);
    if (const auto m = item.find("min_bytes"); m != item.end()) {
      if (!m->is_number_unsigned())
        throw InputError(where + ": \"min_bytes\" must be a byte count");
      rule.min_bytes = m->get<std::uint64_t>();
    }
    if (rule.paths.empty() && rule.python_dists.empty() && rule.node_packages.empty() &&
        rule.deb_packages.empty() && rule.packages.empty() && rule.installers.empty() &&
        rule.content.empty())
      throw InputError(where +
                       ": needs \"paths\", \"python_dists\", \"node_packages\", "
                       "\"deb_packages\", \"packages\", \"installers\" or \"content\"");
    rules.push_back(std::move(rule));
  }
}

json parse_json(const std::string& text, const std::string& label) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(label + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace

const RuleSet& builtin_rules() {
  static const RuleSet rules = [] {
    RuleSet set;
    const json doc = parse_json(attribution_data().at("attribution-rules.json"), "built-in rules");
    set.categories = doc.at("categories").get<std::vector<std::string>>();
    parse_into(doc, "built-in rules", set.categories, set.origins, set.rules);
    return set;
  }();
  return rules;
}

RuleSet with_user_rules_text(const RuleSet& base, const std::string& text,
                             const std::string& label) {
  RuleSet out;
  out.categories = base.categories;
  parse_into(parse_json(text, label), label, base.categories, out.origins, out.rules);
  out.origins.insert(out.origins.end(), base.origins.begin(), base.origins.end());
  out.rules.insert(out.rules.end(), base.rules.begin(), base.rules.end());
  return out;
}

RuleSet with_user_rules(const RuleSet& base, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read the rules file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return with_user_rules_text(base, text.str(), path);
}

namespace {

// A package.json or node_modules marker larger than this is no package's
// (package.json files are kilobytes; Yarn's state lists every package).
constexpr std::uint64_t kNodeFileBytes = 4u << 20;

bool is_database(std::string_view path, std::uint64_t size) {
  // rpm's database holds every header in full (file names, digests, scripts).
  if (path == "var/lib/rpm/rpmdb.sqlite" || path == "usr/lib/sysimage/rpm/rpmdb.sqlite")
    return size <= (256u << 20);
  if (size > (16u << 20)) return false;
  // Which distribution the image is (an SBOM's package URLs name it).
  if (path == "etc/os-release" || path == "usr/lib/os-release") return size <= (64u << 10);
  if (path.starts_with("var/lib/dpkg/")) {
    if (path.starts_with("var/lib/dpkg/info/") && path.ends_with(".list")) return true;
    return path == "var/lib/dpkg/status";
  }
  if (path.ends_with(".dist-info/RECORD") || path.ends_with(".egg-info/installed-files.txt"))
    return true;
  // Node.js packages: each one's own package.json (a few hundred bytes to
  // a few kB, one a package) and the markers of who laid node_modules out.
  if (attribution_detail::is_node_manifest(path) || attribution_detail::is_node_marker(path))
    return size <= kNodeFileBytes;
  // conda and mamba: PREFIX/conda-meta/NAME-VERSION-BUILD.json
  if (path.ends_with(".json")) {
    const auto slash = path.rfind('/');
    return slash != std::string_view::npos && path.substr(0, slash).ends_with("conda-meta") &&
           (slash == 10 || path[slash - 11] == '/');
  }
  return false;
}

}  // namespace

std::uint64_t is_package_database(std::string_view path, std::uint64_t size) {
  return is_database(path, size) ? kCaptureAll : 0;
}

std::uint64_t attribution_capture(std::string_view path, std::uint64_t size) {
  if (is_database(path, size)) return kCaptureAll;
  return size >= kModelMinBytes ? kModelHeadBytes : 0;
}

CaptureFn attribution_capture_inspected() {
  return CaptureFn(attribution_capture,
                   [](std::string_view, std::uint64_t size, std::string_view head,
                      ForwardReader& rest) -> std::any {
                     if (auto module = inspect_binary_module(head, rest, size))
                       return std::move(*module);
                     return {};
                   });
}

}  // namespace imgsmith
