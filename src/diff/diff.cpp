#include "imgsmith/diff.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "imgsmith/error.hpp"
#include "imgsmith/size.hpp"

namespace imgsmith {
namespace {

using nlohmann::json;

std::int64_t signed_delta(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::int64_t>(b) - static_cast<std::int64_t>(a);
}

std::uint64_t bytes_at(const json& doc, const char* section, const char* key) {
  const auto s = doc.find(section);
  if (s == doc.end() || !s->is_object()) return 0;
  const auto v = s->find(key);
  return v != s->end() && v->is_number_unsigned() ? v->get<std::uint64_t>() : 0;
}

json triple(std::uint64_t a, std::uint64_t b) {
  return {{"old", a}, {"new", b}, {"delta", signed_delta(a, b)}};
}

// A {"old","new","delta"} triple with a name field added.
json named(const char* key, const std::string& value, json t) {
  t[key] = value;
  return t;
}

void check_report(const json& doc, const std::string& side) {
  if (!doc.is_object() || doc.value("schema", "") != "imgsmith.analysis/v1")
    throw InputError(side + " is not an imgsmith.analysis/v1 report");
}

// name -> bytes for a list of {"name","bytes"} nodes.
std::map<std::string, std::uint64_t> by_name(const json& list) {
  std::map<std::string, std::uint64_t> out;
  if (!list.is_array()) return out;
  for (const auto& n : list) out[n.value("name", "")] = n.value("bytes", std::uint64_t{0});
  return out;
}

const json& children_of(const json& categories, const std::string& name) {
  static const json empty = json::array();
  if (!categories.is_array()) return empty;
  for (const auto& c : categories)
    if (c.value("name", "") == name && c.contains("children")) return c["children"];
  return empty;
}

json diff_categories(const json& old_doc, const json& new_doc) {
  const json olds = old_doc.value("categories", json::array());
  const json news = new_doc.value("categories", json::array());
  const auto a = by_name(olds), b = by_name(news);
  std::vector<std::string> names;
  for (const auto& c : news) names.push_back(c.value("name", ""));
  for (const auto& [n, _] : a)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  json out = json::array();
  for (const auto& name : names) {
    const std::uint64_t x = a.count(name) ? a.at(name) : 0, y = b.count(name) ? b.at(name) : 0;
    json children = json::array();
    const auto ca = by_name(children_of(olds, name)), cb = by_name(children_of(news, name));
    std::set<std::string> all;
    for (const auto& [n, _] : ca) all.insert(n);
    for (const auto& [n, _] : cb) all.insert(n);
    for (const auto& n : all) {
      const std::uint64_t cx = ca.count(n) ? ca.at(n) : 0, cy = cb.count(n) ? cb.at(n) : 0;
      if (cx != cy) children.push_back(named("name", n, triple(cx, cy)));
    }
    std::sort(children.begin(), children.end(), [](const json& p, const json& q) {
      return std::llabs(p["delta"].get<std::int64_t>()) >
             std::llabs(q["delta"].get<std::int64_t>());
    });
    json node = named("name", name, triple(x, y));
    node["children"] = children;
    out.push_back(node);
  }
  return out;
}

json layer_summary(const json& l) {
  return {{"index", l.value("index", 0)},
          {"digest", l.value("digest", "")},
          {"size_bytes", l.value("size_bytes", std::uint64_t{0})},
          {"created_by", l.value("created_by", "")}};
}

json diff_layers(const json& old_doc, const json& new_doc) {
  std::multiset<std::string> old_digests;
  for (const auto& l : old_doc.value("layers", json::array()))
    old_digests.insert(l.value("digest", ""));
  json added = json::array(), removed = json::array();
  std::size_t shared = 0;
  std::multiset<std::string> new_digests;
  for (const auto& l : new_doc.value("layers", json::array())) {
    const std::string d = l.value("digest", "");
    new_digests.insert(d);
    if (const auto it = old_digests.find(d); it != old_digests.end() && !d.empty()) {
      old_digests.erase(it);
      ++shared;
    } else {
      added.push_back(layer_summary(l));
    }
  }
  for (const auto& l : old_doc.value("layers", json::array())) {
    const std::string d = l.value("digest", "");
    if (const auto it = new_digests.find(d); it != new_digests.end() && !d.empty()) {
      new_digests.erase(it);
      continue;
    }
    removed.push_back(layer_summary(l));
  }
  return {{"shared", shared}, {"added", added}, {"removed", removed}};
}

json diff_files(const json& old_doc, const json& new_doc) {
  // Reports list different numbers of largest files (a baseline saved with
  // the default --top holds fewer): compare the same number from each side.
  const json olds = old_doc.value("largest_files", json::array());
  const json news = new_doc.value("largest_files", json::array());
  const std::size_t k = std::min(olds.size(), news.size());
  std::map<std::string, std::uint64_t> a, b;
  for (const auto& f : olds) a[f.value("path", "")] = f.value("bytes", std::uint64_t{0});
  for (const auto& f : news) b[f.value("path", "")] = f.value("bytes", std::uint64_t{0});
  json came = json::array(), went = json::array(), changed = json::array();
  for (std::size_t i = 0; i < k; ++i) {
    const std::string p = news[i].value("path", "");
    const std::uint64_t n = news[i].value("bytes", std::uint64_t{0});
    if (!a.count(p))
      came.push_back({{"path", p}, {"bytes", n}});
    else if (a.at(p) != n)
      changed.push_back(named("path", p, triple(a.at(p), n)));
  }
  for (std::size_t i = 0; i < k; ++i) {
    const std::string p = olds[i].value("path", "");
    if (!b.count(p))
      went.push_back({{"path", p}, {"bytes", olds[i].value("bytes", std::uint64_t{0})}});
  }
  // Among the largest files of one side and not listed on the other: a file
  // can enter the list by growing, so "new" means new to the list.
  return {{"new_large", came}, {"vanished_large", went}, {"resized", changed}};
}

json diff_findings(const json& old_doc, const json& new_doc) {
  std::map<std::string, std::uint64_t> a, b;
  for (const auto& f : old_doc.value("findings", json::array()))
    a[f.value("id", "")] = f.value("bytes", std::uint64_t{0});
  for (const auto& f : new_doc.value("findings", json::array()))
    b[f.value("id", "")] = f.value("bytes", std::uint64_t{0});
  json appeared = json::array(), gone = json::array(), changed = json::array();
  for (const auto& [id, n] : b) {
    if (!a.count(id))
      appeared.push_back({{"id", id}, {"bytes", n}});
    else if (a.at(id) != n)
      changed.push_back(named("id", id, triple(a.at(id), n)));
  }
  for (const auto& [id, n] : a)
    if (!b.count(id)) gone.push_back({{"id", id}, {"bytes", n}});
  return {{"appeared", appeared}, {"gone", gone}, {"changed", changed}};
}

std::string signed_size(std::int64_t delta) {
  const std::uint64_t magnitude =
      delta < 0 ? static_cast<std::uint64_t>(-delta) : static_cast<std::uint64_t>(delta);
  return (delta < 0 ? "-" : "+") + format_size(magnitude);
}

std::string growth_pct(std::uint64_t a, std::uint64_t b) {
  char buf[32];
  if (a == 0) return b == 0 ? "0.0%" : "new";
  std::snprintf(buf, sizeof buf, "%+.1f%%",
                100.0 * (static_cast<double>(b) - static_cast<double>(a)) / static_cast<double>(a));
  return buf;
}

// "  + 1.23 MB  what" for each item: layers and large files that came or went.
void list_items(std::ostream& out, char sign, const json& items, const char* bytes_key,
                const char* label_key) {
  for (const auto& item : items)
    out << "  " << sign << " " << format_size(item[bytes_key].get<std::uint64_t>()) << "  "
        << item[label_key].get<std::string>().substr(0, 70) << "\n";
}

}  // namespace

json diff_reports(const json& old_doc, const json& new_doc, const DiffGate& gate) {
  check_report(old_doc, "OLD");
  check_report(new_doc, "NEW");
  json out;
  out["schema"] = "imgsmith.diff/v1";
  out["old"] = {{"source", old_doc.value("source", "")},
                {"tags", old_doc["image"].value("tags", json::array())}};
  out["new"] = {{"source", new_doc.value("source", "")},
                {"tags", new_doc["image"].value("tags", json::array())}};
  out["size"] = json::object();
  for (const char* key : {"final_bytes", "layers_bytes", "wasted_bytes", "compressed_bytes"})
    out["size"][key] = triple(bytes_at(old_doc, "size", key), bytes_at(new_doc, "size", key));
  out["categories"] = diff_categories(old_doc, new_doc);
  out["layers"] = diff_layers(old_doc, new_doc);
  out["files"] = diff_files(old_doc, new_doc);
  out["findings"] = diff_findings(old_doc, new_doc);

  const std::uint64_t a = bytes_at(old_doc, "size", "final_bytes"),
                      b = bytes_at(new_doc, "size", "final_bytes");
  const std::int64_t growth = signed_delta(a, b);
  json checks = json::array();
  bool passed = true;
  if (gate.max_growth_bytes) {
    const bool ok = growth <= static_cast<std::int64_t>(*gate.max_growth_bytes);
    passed = passed && ok;
    checks.push_back({{"rule", "max-growth"},
                      {"limit", *gate.max_growth_bytes},
                      {"actual", growth},
                      {"passed", ok}});
  }
  if (gate.max_growth_percent) {
    const double pct = a == 0 ? (b == 0 ? 0.0 : 100.0)
                              : 100.0 * static_cast<double>(growth) / static_cast<double>(a);
    const bool ok = !(pct > *gate.max_growth_percent);
    passed = passed && ok;
    checks.push_back({{"rule", "max-growth-percent"},
                      {"limit", *gate.max_growth_percent},
                      {"actual", pct},
                      {"passed", ok}});
  }
  out["gate"] = {{"passed", passed}, {"checks", checks}};
  return out;
}

void render_diff_text(const json& d, std::ostream& out) {
  const auto& size = d["size"];
  const auto line = [&](const char* label, const json& t) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "  %-12s %12s -> %12s  %10s  %s\n", label,
                  format_size(t["old"].get<std::uint64_t>()).c_str(),
                  format_size(t["new"].get<std::uint64_t>()).c_str(),
                  signed_size(t["delta"].get<std::int64_t>()).c_str(),
                  growth_pct(t["old"].get<std::uint64_t>(), t["new"].get<std::uint64_t>()).c_str());
    out << buf;
  };
  out << "OLD  " << d["old"]["source"].get<std::string>() << "\nNEW  "
      << d["new"]["source"].get<std::string>() << "\n\nSIZE\n";
  line("final", size["final_bytes"]);
  line("layers", size["layers_bytes"]);
  line("wasted", size["wasted_bytes"]);
  out << "\nCATEGORIES\n";
  for (const auto& c : d["categories"]) {
    if (c["delta"].get<std::int64_t>() == 0 && c["children"].empty()) continue;
    line(c["name"].get<std::string>().c_str(), c);
    for (std::size_t i = 0; i < c["children"].size() && i < 5; ++i) {
      const auto& k = c["children"][i];
      line(("  " + k["name"].get<std::string>()).c_str(), k);
    }
  }
  const auto& layers = d["layers"];
  out << "\nLAYERS  " << layers["shared"].get<std::size_t>() << " shared, "
      << layers["added"].size() << " added, " << layers["removed"].size() << " removed\n";
  list_items(out, '+', layers["added"], "size_bytes", "created_by");
  list_items(out, '-', layers["removed"], "size_bytes", "created_by");
  const auto& files = d["files"];
  if (!files["new_large"].empty() || !files["vanished_large"].empty()) out << "\nLARGE FILES\n";
  list_items(out, '+', files["new_large"], "bytes", "path");
  list_items(out, '-', files["vanished_large"], "bytes", "path");
  const auto& findings = d["findings"];
  out << "\nFINDINGS\n";
  for (const auto& f : findings["appeared"])
    out << "  appeared  " << f["id"].get<std::string>() << " ("
        << format_size(f["bytes"].get<std::uint64_t>()) << ")\n";
  for (const auto& f : findings["gone"])
    out << "  gone      " << f["id"].get<std::string>() << " ("
        << format_size(f["bytes"].get<std::uint64_t>()) << ")\n";
  for (const auto& f : findings["changed"])
    out << "  changed   " << f["id"].get<std::string>() << " "
        << signed_size(f["delta"].get<std::int64_t>()) << "\n";
  if (findings["appeared"].empty() && findings["gone"].empty() && findings["changed"].empty())
    out << "  unchanged\n";
  if (!d["gate"]["checks"].empty())
    out << "\nGATE  " << (d["gate"]["passed"].get<bool>() ? "passed" : "FAILED") << "\n";
  for (const auto& c : d["gate"]["checks"])
    out << "  " << (c["passed"].get<bool>() ? "pass  " : "FAIL  ") << c["rule"].get<std::string>()
        << " (limit " << c["limit"].dump() << ", actual " << c["actual"].dump() << ")\n";
}

void render_diff_markdown(const json& d, std::ostream& out) {
  const auto& s = d["size"]["final_bytes"];
  out << "### imgsmith diff\n\n";
  if (!d["gate"]["checks"].empty())
    out << (d["gate"]["passed"].get<bool>() ? "**Gate passed.**\n\n" : "**Gate failed.**\n\n");
  out << "Final size " << format_size(s["old"].get<std::uint64_t>()) << " → "
      << format_size(s["new"].get<std::uint64_t>()) << " ("
      << signed_size(s["delta"].get<std::int64_t>()) << ", "
      << growth_pct(s["old"].get<std::uint64_t>(), s["new"].get<std::uint64_t>()) << ")\n\n";
  out << "| category | old | new | change |\n| --- | ---: | ---: | ---: |\n";
  for (const auto& c : d["categories"]) {
    if (c["old"].get<std::uint64_t>() == 0 && c["new"].get<std::uint64_t>() == 0) continue;
    out << "| " << c["name"].get<std::string>() << " | "
        << format_size(c["old"].get<std::uint64_t>()) << " | "
        << format_size(c["new"].get<std::uint64_t>()) << " | "
        << signed_size(c["delta"].get<std::int64_t>()) << " |\n";
  }
  const auto& f = d["findings"];
  if (!f["appeared"].empty() || !f["gone"].empty()) {
    out << "\n";
    for (const auto& x : f["appeared"])
      out << "- new finding `" << x["id"].get<std::string>() << "` ("
          << format_size(x["bytes"].get<std::uint64_t>()) << ")\n";
    for (const auto& x : f["gone"])
      out << "- fixed `" << x["id"].get<std::string>() << "` ("
          << format_size(x["bytes"].get<std::uint64_t>()) << ")\n";
  }
}

}  // namespace imgsmith
