#include "imgsmith/diff.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "imgsmith/error.hpp"
#include "imgsmith/render.hpp"
#include "imgsmith/size.hpp"
#include "imgsmith/text.hpp"

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

// A child's origins ({"pip": bytes, ...}) in a category list, or null.
json origins_of(const json& children, const std::string& name) {
  if (!children.is_array()) return nullptr;
  for (const auto& c : children)
    if (c.value("name", "") == name && c.contains("origins") && c["origins"].is_object()) return c["origins"];
  return nullptr;
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
      if (cx == cy) continue;
      json child = named("name", n, triple(cx, cy));
      // Where the bytes came from on each side: torch from pip before, from apt after.
      const json before = origins_of(children_of(olds, name), n), after = origins_of(children_of(news, name), n);
      if (!before.is_null() || !after.is_null()) child["origins"] = {{"old", before}, {"new", after}};
      children.push_back(std::move(child));
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

// One side's files: every visible file of an image analysed in this run, or
// only the largest files a saved report lists.
struct FileSide {
  std::vector<FileSet::File> from_report;
  const FileSet* set = nullptr;
  bool complete = false;
  // A partial side lists every file larger than this (the smallest listed):
  // a file larger than it that the list lacks was not there at that size.
  std::optional<std::uint64_t> listed_above;
  std::size_t listed = 0;
  const std::vector<FileSet::File>& files() const { return set != nullptr ? set->files : from_report; }
};

FileSide file_side(const json& doc, const FileSet* set) {
  FileSide side;
  if (set != nullptr) {
    side.set = set;
    side.complete = true;
    return side;
  }
  const json& list = doc.contains("largest_files") ? doc["largest_files"] : json::array();
  if (list.is_array())
    for (const auto& f : list) {
      if (!f.is_object()) continue;
      side.from_report.push_back(
          FileSet::File{path_of(f), f.value("bytes", std::uint64_t{0}), true});
      const std::uint64_t b = side.from_report.back().bytes;
      side.listed_above = side.listed_above ? std::min(*side.listed_above, b) : b;
    }
  side.listed = side.from_report.size();
  return side;
}

// Paths in byte order; a path repeated in a report counts once.
std::vector<const FileSet::File*> by_path(const std::vector<FileSet::File>& files) {
  std::vector<const FileSet::File*> out;
  out.reserve(files.size());
  for (const auto& f : files) out.push_back(&f);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->path < b->path; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const auto* a, const auto* b) { return a->path == b->path; }),
            out.end());
  return out;
}

struct Change {
  const std::string* path = nullptr;
  std::uint64_t old_bytes = 0, new_bytes = 0;
  bool hard_link = false;  // another name of content listed under its first name
  std::uint64_t size() const { return std::max(old_bytes, new_bytes); }
  std::uint64_t magnitude() const {
    return new_bytes > old_bytes ? new_bytes - old_bytes : old_bytes - new_bytes;
  }
};

// The largest `top` of `changes` as JSON, largest first (equal ones by path).
json cut(std::vector<Change>& changes, std::size_t top, bool resized) {
  // A hard link's bytes are its first name's: it adds or frees none, so it goes last.
  const auto key = [resized](const Change& c) {
    return resized ? c.magnitude() : c.hard_link ? 0 : c.size();
  };
  const auto first = [&](const Change& a, const Change& b) {
    return key(a) != key(b) ? key(a) > key(b) : *a.path < *b.path;
  };
  const std::size_t n = std::min(top, changes.size());
  std::partial_sort(changes.begin(), changes.begin() + static_cast<std::ptrdiff_t>(n), changes.end(),
                    first);
  json out = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    const Change& c = changes[i];
    json item = json::object();
    put_path(item, *c.path);
    if (resized) {
      item["old"] = c.old_bytes;
      item["new"] = c.new_bytes;
      item["delta"] = signed_delta(c.old_bytes, c.new_bytes);
    } else {
      item["bytes"] = c.size();
    }
    if (c.hard_link) item["hard_link"] = true;
    out.push_back(std::move(item));
  }
  return out;
}

json diff_files(const json& old_doc, const json& new_doc, const DiffOptions& options) {
  const FileSide a = file_side(old_doc, options.old_files);
  const FileSide b = file_side(new_doc, options.new_files);
  const auto olds = by_path(a.files()), news = by_path(b.files());
  std::vector<Change> added, removed, resized, entered, left;
  std::uint64_t added_bytes = 0, removed_bytes = 0;
  // A file only one side has: new or gone when the other side is complete;
  // against a partial side, only "not in its list" is known, and only said
  // when the file is larger than everything that list had to leave out.
  const auto only_new = [&](const FileSet::File& f) {
    if (a.complete) {
      added.push_back(Change{&f.path, 0, f.bytes, !f.listed});
      added_bytes += f.listed ? f.bytes : 0;
    } else if (f.listed && a.listed_above && f.bytes > *a.listed_above) {
      entered.push_back(Change{&f.path, 0, f.bytes});
    }
  };
  const auto only_old = [&](const FileSet::File& f) {
    if (b.complete) {
      removed.push_back(Change{&f.path, f.bytes, 0, !f.listed});
      removed_bytes += f.listed ? f.bytes : 0;
    } else if (f.listed && b.listed_above && f.bytes > *b.listed_above) {
      left.push_back(Change{&f.path, f.bytes, 0});
    }
  };
  std::size_t i = 0, j = 0;
  while (i < olds.size() || j < news.size()) {
    if (j == news.size() || (i < olds.size() && olds[i]->path < news[j]->path)) {
      only_old(*olds[i++]);
    } else if (i == olds.size() || news[j]->path < olds[i]->path) {
      only_new(*news[j++]);
    } else {
      // Content that changed size is shown once, under its first name.
      if (olds[i]->bytes != news[j]->bytes && (olds[i]->listed || news[j]->listed))
        resized.push_back(Change{&news[j]->path, olds[i]->bytes, news[j]->bytes});
      ++i, ++j;
    }
  }
  json out = {{"old_complete", a.complete},
              {"new_complete", b.complete},
              {"counts",
               {{"added", added.size()},
                {"removed", removed.size()},
                {"resized", resized.size()},
                {"entered_largest", entered.size()},
                {"left_largest", left.size()}}},
              {"added_bytes", added_bytes},
              {"removed_bytes", removed_bytes}};
  if (!a.complete) out["old_listed"] = a.listed;
  if (!b.complete) out["new_listed"] = b.listed;
  out["added"] = cut(added, options.top, false);
  out["removed"] = cut(removed, options.top, false);
  out["resized"] = cut(resized, options.top, true);
  out["entered_largest"] = cut(entered, options.top, false);
  out["left_largest"] = cut(left, options.top, false);
  return out;
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

// One line per item: "  + 1.23 MB  what", the label shown safely.
void list_items(std::ostream& out, const char* sign, const json& items, const char* bytes_key,
                const char* label_key, const char* note = "") {
  for (const auto& item : items)
    out << "  " << sign << " " << format_size(item[bytes_key].get<std::uint64_t>()) << "  "
        << shorten(visible(path_of(item, label_key)), 70)
        << (item.value("hard_link", false) ? " (hard link)" : "") << note << "\n";
}

std::size_t count_of(const json& files, const char* key) {
  return files.contains("counts") ? files["counts"].value(key, std::size_t{0}) : 0;
}

// The files that changed, saying what the comparison could know.
void render_files_text(const json& files, std::ostream& out) {
  const std::size_t added = count_of(files, "added"), removed = count_of(files, "removed"),
                    resized = count_of(files, "resized"), entered = count_of(files, "entered_largest"),
                    left = count_of(files, "left_largest");
  const bool complete = files.value("old_complete", false) && files.value("new_complete", false);
  out << "\nFILES  " << (complete ? "every file compared" : "largest files compared (a saved report lists only those)")
      << ": " << added << " added";
  if (added > 0 && files.contains("added_bytes"))
    out << " (" << format_size(files["added_bytes"].get<std::uint64_t>()) << ")";
  out << ", " << removed << " removed";
  if (removed > 0 && files.contains("removed_bytes"))
    out << " (" << format_size(files["removed_bytes"].get<std::uint64_t>()) << ")";
  out << ", " << resized << " resized\n";
  const auto more = [&](const json& list, std::size_t total) {
    if (total > list.size()) out << "    ... " << format_count(total - list.size()) << " more\n";
  };
  list_items(out, "+", files["added"], "bytes", "path");
  more(files["added"], added);
  list_items(out, "-", files["removed"], "bytes", "path");
  more(files["removed"], removed);
  for (const auto& item : files["resized"])
    out << "  ~ " << signed_size(item["delta"].get<std::int64_t>()) << "  "
        << shorten(visible(path_of(item)), 70) << " (" << format_size(item["old"].get<std::uint64_t>())
        << " -> " << format_size(item["new"].get<std::uint64_t>()) << ")\n";
  more(files["resized"], resized);
  if (entered > 0) {
    const std::string note = "  entered the old report's largest-" +
                             std::to_string(files.value("old_listed", std::size_t{0})) +
                             " list (new, or grown)";
    list_items(out, ">", files["entered_largest"], "bytes", "path", note.c_str());
    more(files["entered_largest"], entered);
  }
  if (left > 0) {
    const std::string note = "  left the new report's largest-" +
                             std::to_string(files.value("new_listed", std::size_t{0})) +
                             " list (removed, or shrunk)";
    list_items(out, "<", files["left_largest"], "bytes", "path", note.c_str());
    more(files["left_largest"], left);
  }
}

void collect_files(const FileNode& node, std::string& path, std::span<const MergedTree::Inode> inodes,
                   EntryType pass, std::vector<bool>& seen, std::vector<FileSet::File>& out) {
  for (const FileNode* child : node.children()) {
    const std::size_t at = path.size();
    path.push_back('/');
    path += child->name();
    if (child->type == pass && child->inode() >= 0) {
      const auto id = static_cast<std::size_t>(child->inode());
      out.push_back(FileSet::File{path, inodes[id].size, !seen[id]});
      seen[id] = true;
    }
    if (child->has_children()) collect_files(*child, path, inodes, pass, seen, out);
    path.resize(at);
  }
}

}  // namespace

FileSet file_set(const MergedTree& tree) {
  FileSet set;
  std::vector<bool> seen(tree.inodes().size(), false);
  std::string path;
  // Regular-file names first, then hard links: the name a report lists for
  // each content is the first one met, as in analyze's largest files.
  for (const EntryType pass : {EntryType::File, EntryType::Hardlink})
    collect_files(tree.root(), path, tree.inodes(), pass, seen, set.files);
  return set;
}

json diff_reports(const json& old_doc, const json& new_doc, const DiffGate& gate,
                  const DiffOptions& options) {
  check_report(old_doc, "OLD");
  check_report(new_doc, "NEW");
  json out;
  out["schema"] = "imgsmith.diff/v1";
  for (const auto& [key, doc] : {std::pair<const char*, const json*>{"old", &old_doc}, {"new", &new_doc}}) {
    json side = json::object();
    put_path(side, path_of(*doc, "source"), "source");
    side["tags"] = doc->contains("image") && (*doc)["image"].is_object()
                       ? (*doc)["image"].value("tags", json::array())
                       : json::array();
    out[key] = side;
  }
  out["size"] = json::object();
  for (const char* key : {"final_bytes", "layers_bytes", "wasted_bytes", "compressed_bytes"})
    out["size"][key] = triple(bytes_at(old_doc, "size", key), bytes_at(new_doc, "size", key));
  out["categories"] = diff_categories(old_doc, new_doc);
  out["layers"] = diff_layers(old_doc, new_doc);
  out["files"] = diff_files(old_doc, new_doc, options);
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
  out << "OLD  " << visible(path_of(d["old"], "source")) << "\nNEW  "
      << visible(path_of(d["new"], "source")) << "\n\nSIZE\n";
  line("final", size["final_bytes"]);
  line("layers", size["layers_bytes"]);
  line("wasted", size["wasted_bytes"]);
  out << "\nCATEGORIES\n";
  for (const auto& c : d["categories"]) {
    if (c["delta"].get<std::int64_t>() == 0 && c["children"].empty()) continue;
    line(visible(c["name"].get<std::string>()).c_str(), c);
    for (std::size_t i = 0; i < c["children"].size() && i < 5; ++i) {
      const auto& k = c["children"][i];
      line(("  " + visible(k["name"].get<std::string>())).c_str(), k);
      if (k.contains("origins")) {
        const auto side = [](const json& o) {
          if (!o.is_object() || o.empty()) return std::string("-");
          std::string text;
          for (const auto& [origin, bytes] : o.items())
            text += (text.empty() ? "" : ", ") + visible(origin) + " " + format_size(bytes.get<std::uint64_t>());
          return text;
        };
        out << "                 from " << side(k["origins"]["old"]) << " -> " << side(k["origins"]["new"]) << "\n";
      }
    }
  }
  const auto& layers = d["layers"];
  out << "\nLAYERS  " << layers["shared"].get<std::size_t>() << " shared, "
      << layers["added"].size() << " added, " << layers["removed"].size() << " removed\n";
  list_items(out, "+", layers["added"], "size_bytes", "created_by");
  list_items(out, "-", layers["removed"], "size_bytes", "created_by");
  render_files_text(d["files"], out);
  const auto& findings = d["findings"];
  out << "\nFINDINGS\n";
  for (const auto& f : findings["appeared"])
    out << "  appeared  " << visible(f["id"].get<std::string>()) << " ("
        << format_size(f["bytes"].get<std::uint64_t>()) << ")\n";
  for (const auto& f : findings["gone"])
    out << "  gone      " << visible(f["id"].get<std::string>()) << " ("
        << format_size(f["bytes"].get<std::uint64_t>()) << ")\n";
  for (const auto& f : findings["changed"])
    out << "  changed   " << visible(f["id"].get<std::string>()) << " "
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
    out << "| " << visible(c["name"].get<std::string>()) << " | "
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
