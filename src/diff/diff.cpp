#include "imgsmith/diff/diff.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "imgsmith/analysis/merged_tree.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

// name -> bytes for a list of categories or children.
std::map<std::string, std::uint64_t> by_name(const std::vector<CategoryNode>& list) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& n : list) out[utf8_replaced(n.name)] = n.bytes;
  return out;
}

const std::vector<CategoryNode>& categories_of(const Report& r) {
  static const std::vector<CategoryNode> none;
  return r.attribution != nullptr ? r.attribution->categories : none;
}

const std::vector<CategoryNode>& children_of(const std::vector<CategoryNode>& categories,
                                             const std::string& name) {
  static const std::vector<CategoryNode> none;
  for (const auto& c : categories)
    if (utf8_replaced(c.name) == name) return c.children;
  return none;
}

// A child's origins, when it has any.
std::optional<std::map<std::string, std::uint64_t>> origins_of(
    const std::vector<CategoryNode>& children, const std::string& name) {
  for (const auto& c : children)
    if (utf8_replaced(c.name) == name && !c.origins.empty()) {
      std::map<std::string, std::uint64_t> out;
      for (const auto& [origin, bytes] : c.origins) out[utf8_replaced(origin)] = bytes;
      return out;
    }
  return std::nullopt;
}

std::uint64_t at(const std::map<std::string, std::uint64_t>& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

std::vector<CategoryChange> diff_categories(const Report& old_report, const Report& new_report) {
  const auto& olds = categories_of(old_report);
  const auto& news = categories_of(new_report);
  const auto a = by_name(olds), b = by_name(news);
  std::vector<std::string> names;
  for (const auto& c : news) names.push_back(utf8_replaced(c.name));
  for (const auto& [n, _] : a)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::vector<CategoryChange> out;
  for (const auto& name : names) {
    CategoryChange node{name, SizeChange{at(a, name), at(b, name)}, {}};
    const auto& old_children = children_of(olds, name);
    const auto& new_children = children_of(news, name);
    const auto ca = by_name(old_children), cb = by_name(new_children);
    std::set<std::string> all;
    for (const auto& [n, _] : ca) all.insert(n);
    for (const auto& [n, _] : cb) all.insert(n);
    for (const auto& n : all) {
      const SizeChange bytes{at(ca, n), at(cb, n)};
      if (bytes.old_bytes == bytes.new_bytes) continue;
      node.children.push_back(
          ChildChange{n, bytes, origins_of(old_children, n), origins_of(new_children, n)});
    }
    std::sort(node.children.begin(), node.children.end(),
              [](const ChildChange& p, const ChildChange& q) {
                return std::llabs(p.bytes.delta()) > std::llabs(q.bytes.delta());
              });
    out.push_back(std::move(node));
  }
  return out;
}

// What a layer's line shows: the rest is not compared.
LayerReport layer_summary(const LayerReport& l) {
  LayerReport s;
  s.index = l.index;
  s.digest = l.digest;
  s.diff_id = l.diff_id;
  s.size_bytes = l.size_bytes;
  s.created_by = utf8_replaced(l.created_by);
  return s;
}

}  // namespace

// Layers are the same when their content is: matched first by diff_id
// (the digest of the uncompressed tar, which the config lists whatever the
// transport), then, for what a side does not know the diff_id of (a saved
// report of an older version), by the blob digest. So an image saved by
// docker save, as OCI with gzip and as OCI with zstd shares every layer,
// though each stores them under another digest. What is left is matched by
// listing (the entries' names, types, sizes and links): such a layer is
// not shared but rebuilt, the same files with other bytes (timestamps, or
// content of the same size), and said apart from layers added and removed.
LayerChanges diff_layers(const Analysis& old_a, const Analysis& new_a) {
  std::vector<bool> old_matched(old_a.layers.size(), false),
      new_matched(new_a.layers.size(), false);
  std::vector<bool> rebuilt(new_a.layers.size(), false);
  const auto match_by = [&](std::string LayerReport::*key) {
    std::multimap<std::string, std::size_t> old_by_key;
    for (std::size_t i = 0; i < old_a.layers.size(); ++i)
      if (!old_matched[i] && !(old_a.layers[i].*key).empty())
        old_by_key.emplace(old_a.layers[i].*key, i);
    for (std::size_t j = 0; j < new_a.layers.size(); ++j) {
      if (new_matched[j] || (new_a.layers[j].*key).empty()) continue;
      if (const auto it = old_by_key.find(new_a.layers[j].*key); it != old_by_key.end()) {
        old_matched[it->second] = new_matched[j] = true;
        rebuilt[j] = key == &LayerReport::listing;
        old_by_key.erase(it);
      }
    }
  };
  match_by(&LayerReport::diff_id);
  match_by(&LayerReport::digest);
  match_by(&LayerReport::listing);
  LayerChanges out;
  for (std::size_t j = 0; j < new_a.layers.size(); ++j) {
    if (rebuilt[j])
      out.rebuilt.push_back(layer_summary(new_a.layers[j]));
    else if (new_matched[j])
      ++out.shared;
    else
      out.added.push_back(layer_summary(new_a.layers[j]));
  }
  for (std::size_t i = 0; i < old_a.layers.size(); ++i)
    if (!old_matched[i]) out.removed.push_back(layer_summary(old_a.layers[i]));
  return out;
}

namespace {

// One side's files: every visible file of an image analysed in this run, or
// only the largest files a report lists.
struct FileSide {
  std::vector<FileSet::File> from_report;
  const FileSet* set = nullptr;
  bool complete = false;
  // A partial side lists every file larger than this (the smallest listed):
  // a file larger than it that the list lacks was not there at that size.
  std::optional<std::uint64_t> listed_above;
  std::size_t listed = 0;
  const std::vector<FileSet::File>& files() const {
    return set != nullptr ? set->files : from_report;
  }
};

FileSide file_side(const Analysis& a, const FileSet* set) {
  FileSide side;
  if (set != nullptr) {
    side.set = set;
    side.complete = true;
    return side;
  }
  for (std::size_t i = 0; i < a.largest_files.size() && i < a.top; ++i) {
    const FileReport& f = a.largest_files[i];
    side.from_report.push_back(FileSet::File{f.path, f.bytes, true});
    side.listed_above = side.listed_above ? std::min(*side.listed_above, f.bytes) : f.bytes;
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
  bool hard_link = false;
  std::uint64_t size() const { return std::max(old_bytes, new_bytes); }
  std::uint64_t magnitude() const {
    return new_bytes > old_bytes ? new_bytes - old_bytes : old_bytes - new_bytes;
  }
};

// The largest `top` of `changes`, largest first (equal ones by path).
FileChanges::List cut(std::vector<Change>& changes, std::size_t top, bool resized) {
  // A hard link's bytes are its first name's: it adds or frees none, so it goes last.
  const auto key = [resized](const Change& c) {
    return resized ? c.magnitude() : c.hard_link ? 0 : c.size();
  };
  const auto first = [&](const Change& a, const Change& b) {
    return key(a) != key(b) ? key(a) > key(b) : *a.path < *b.path;
  };
  const std::size_t n = std::min(top, changes.size());
  std::partial_sort(changes.begin(), changes.begin() + static_cast<std::ptrdiff_t>(n),
                    changes.end(), first);
  FileChanges::List out{changes.size(), {}};
  for (std::size_t i = 0; i < n; ++i) {
    const Change& c = changes[i];
    out.top.push_back(FileChange{*c.path, c.old_bytes, c.new_bytes, c.hard_link});
  }
  return out;
}

FileChanges diff_files(const Analysis& old_a, const Analysis& new_a, const DiffOptions& options) {
  const FileSide a = file_side(old_a, options.old_files);
  const FileSide b = file_side(new_a, options.new_files);
  const auto olds = by_path(a.files()), news = by_path(b.files());
  std::vector<Change> added, removed, resized, entered, left;
  FileChanges out;
  // A file only one side has: new or gone when the other side is complete;
  // against a partial side, only "not in its list" is known, and only said
  // when the file is larger than everything that list had to leave out.
  const auto only_new = [&](const FileSet::File& f) {
    if (a.complete) {
      added.push_back(Change{&f.path, 0, f.bytes, !f.listed});
      out.added_bytes += f.listed ? f.bytes : 0;
    } else if (f.listed && a.listed_above && f.bytes > *a.listed_above) {
      entered.push_back(Change{&f.path, 0, f.bytes});
    }
  };
  const auto only_old = [&](const FileSet::File& f) {
    if (b.complete) {
      removed.push_back(Change{&f.path, f.bytes, 0, !f.listed});
      out.removed_bytes += f.listed ? f.bytes : 0;
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
  out.old_complete = a.complete;
  out.new_complete = b.complete;
  out.old_listed = a.listed;
  out.new_listed = b.listed;
  out.added = cut(added, options.top, false);
  out.removed = cut(removed, options.top, false);
  out.resized = cut(resized, options.top, true);
  out.entered_largest = cut(entered, options.top, false);
  out.left_largest = cut(left, options.top, false);
  return out;
}

std::map<std::string, std::uint64_t> findings_by_id(const Report& r) {
  std::map<std::string, std::uint64_t> out;
  if (r.findings != nullptr)
    for (const auto& f : *r.findings) out[f.id] = f.bytes;
  return out;
}

FindingChanges diff_findings(const Report& old_report, const Report& new_report) {
  const auto a = findings_by_id(old_report), b = findings_by_id(new_report);
  FindingChanges out;
  for (const auto& [id, n] : b) {
    if (!a.count(id))
      out.appeared.push_back(FindingChange{id, SizeChange{0, n}});
    else if (a.at(id) != n)
      out.changed.push_back(FindingChange{id, SizeChange{a.at(id), n}});
  }
  for (const auto& [id, n] : a)
    if (!b.count(id)) out.gone.push_back(FindingChange{id, SizeChange{n, 0}});
  return out;
}

// A side's packages by installer and name: its versions (in order) and bytes.
struct Versions {
  std::vector<std::string> versions;
  std::uint64_t bytes = 0;
};
std::optional<std::map<std::pair<std::string, std::string>, Versions>> packages_of(
    const Report& r) {
  // A report saved before packages were written has no list: nothing is
  // known of its packages (an image with no database has an empty one).
  if (r.attribution == nullptr || !r.attribution->packages_listed) return std::nullopt;
  std::map<std::pair<std::string, std::string>, Versions> out;
  for (const InstalledPackage& p : r.attribution->packages) {
    Versions& v = out[{utf8_replaced(p.installer), utf8_replaced(p.name)}];
    v.versions.push_back(utf8_replaced(p.version));
    v.bytes += p.bytes;
  }
  return out;
}

std::string joined(const std::vector<std::string>& versions) {
  std::string out;
  for (const auto& v : versions) out += (out.empty() ? "" : ", ") + v;
  return out;
}

DiffReport::Side side_of(const Analysis& a) {
  DiffReport::Side side{a.source, {}};
  for (const auto& t : a.tags) side.tags.push_back(utf8_replaced(t));
  return side;
}

void check_growth(DiffReport& d, const DiffGate& gate) {
  const std::uint64_t a = d.final_bytes.old_bytes, b = d.final_bytes.new_bytes;
  const std::int64_t growth = d.final_bytes.delta();
  if (gate.max_growth_bytes) {
    const bool ok = growth <= static_cast<std::int64_t>(*gate.max_growth_bytes);
    d.checks.push_back(DiffCheck{"max-growth", *gate.max_growth_bytes, growth, ok});
  }
  if (gate.max_growth_percent) {
    const double pct = a == 0 ? (b == 0 ? 0.0 : 100.0)
                              : 100.0 * static_cast<double>(growth) / static_cast<double>(a);
    d.checks.push_back(DiffCheck{"max-growth-percent", *gate.max_growth_percent, pct,
                                 !(pct > *gate.max_growth_percent)});
  }
  for (const auto& c : d.checks) d.passed = d.passed && c.passed;
}

void collect_files(const FileNode& node, std::string& path,
                   std::span<const MergedTree::Inode> inodes, EntryType pass,
                   std::vector<bool>& seen, std::vector<FileSet::File>& out) {
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

PackageChanges diff_packages(const Report& old_report, const Report& new_report) {
  PackageChanges out;
  const auto a = packages_of(old_report), b = packages_of(new_report);
  if (!a || !b) return out;
  out.known = true;
  for (const auto& [key, v] : *b) {
    const auto it = a->find(key);
    if (it == a->end()) {
      out.added.push_back(PackageChange{key.first, key.second, "", joined(v.versions), 0, v.bytes});
    } else if (it->second.versions != v.versions) {
      out.changed.push_back(PackageChange{key.first, key.second, joined(it->second.versions),
                                          joined(v.versions), it->second.bytes, v.bytes});
    }
  }
  for (const auto& [key, v] : *a)
    if (!b->contains(key))
      out.removed.push_back(
          PackageChange{key.first, key.second, joined(v.versions), "", v.bytes, 0});
  return out;
}

DiffReport diff_reports(const Report& old_report, const Report& new_report, const DiffGate& gate,
                        const DiffOptions& options) {
  const Analysis& a = old_report.analysis;
  const Analysis& b = new_report.analysis;
  DiffReport d;
  d.old_side = side_of(a);
  d.new_side = side_of(b);
  d.final_bytes = SizeChange{a.final_bytes, b.final_bytes};
  d.layers_bytes = SizeChange{a.layers_bytes, b.layers_bytes};
  d.wasted_bytes = SizeChange{a.wasted_bytes, b.wasted_bytes};
  d.compressed_bytes = SizeChange{a.compressed_bytes.value_or(0), b.compressed_bytes.value_or(0)};
  d.categories = diff_categories(old_report, new_report);
  d.layers = diff_layers(a, b);
  d.files = diff_files(a, b, options);
  d.findings = diff_findings(old_report, new_report);
  d.packages = diff_packages(old_report, new_report);
  check_growth(d, gate);
  return d;
}

}  // namespace imgsmith
