#include "owners.hpp"

#include <algorithm>
#include <any>
#include <cctype>
#include <nlohmann/json.hpp>

#include "gems.hpp"
#include "imgsmith/attribution/binary_modules.hpp"
#include "imgsmith/util/text.hpp"
#include "rpmdb.hpp"

namespace imgsmith::attribution_detail {
namespace {

// The first field of a RECORD line (CSV: a path with a comma is quoted).
std::string record_path(std::string_view line) {
  if (!line.empty() && line.front() == '"') {
    std::string out;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          out.push_back('"');
          ++i;
          continue;
        }
        break;
      }
      out.push_back(line[i]);
    }
    return out;
  }
  return std::string(line.substr(0, line.find(',')));
}

template <typename Fn>
void for_each_line(std::string_view text, Fn fn) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) fn(line);
    start = end + 1;
  }
}

// "numpy-1.24.2.dist-info", "numpy-1.24.2-py3.11.egg-info", "numpy.egg-info"
// -> {"numpy", "1.24.2"}; false for any other name.
bool parse_info_dir(std::string_view name, std::string& dist, std::string& version) {
  std::string_view stem;
  if (name.ends_with(".dist-info")) {
    stem = name.substr(0, name.size() - 10);
  } else if (name.ends_with(".egg-info")) {
    stem = name.substr(0, name.size() - 9);
  } else {
    return false;
  }
  const auto dash = stem.find('-');
  dist = std::string(stem.substr(0, dash));
  version.clear();
  if (dash != std::string_view::npos) {
    const std::string_view rest = stem.substr(dash + 1);
    version = std::string(rest.substr(0, rest.find('-')));
  }
  return !dist.empty();
}

// The segment of `path` right after its site dir, and whether more follows.
std::string_view top_level_of(std::string_view path, std::string_view site, bool& nested) {
  const std::string_view rest = path.substr(site.size() + 1);
  const auto slash = rest.find('/');
  nested = slash != std::string_view::npos;
  return rest.substr(0, slash);
}

// A system package named for the distribution it carries, without its
// packaging prefix: Debian's python3-numpy is numpy.
std::string dist_from_package(std::string_view package) {
  for (const std::string_view prefix : {"python3-", "python-", "py3-"})
    if (package.starts_with(prefix)) return std::string(package.substr(prefix.size()));
  return std::string(package);
}

}  // namespace

std::string normalise_dist(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '-' || c == '.') c = '_';
  }
  return out;
}

std::string_view site_dir_of(std::string_view path) {
  for (std::size_t from = 0;;) {
    const auto at = path.find("-packages", from);
    if (at == std::string_view::npos) return {};
    const std::size_t end = at + 9;
    const bool segment_end = end == path.size() || path[end] == '/';
    for (const std::string_view kind : {std::string_view("site"), std::string_view("dist")}) {
      if (at < kind.size() || path.substr(at - kind.size(), kind.size()) != kind) continue;
      const std::size_t start = at - kind.size();
      if (segment_end && (start == 0 || path[start - 1] == '/') && end < path.size())
        return path.substr(0, end);
    }
    from = end;
  }
}

std::uint32_t Ownership::add_owner(Owner owner) {
  owners_.push_back(std::move(owner));
  return static_cast<std::uint32_t>(owners_.size() - 1);
}

Ownership::Ownership(const std::vector<CapturedFile>& databases) {
  // dpkg's status file, read once: each package's version and architecture.
  std::unordered_map<std::string, DpkgStatus> dpkg_status;
  NodeInstallers node_installers;
  for (const auto& f : databases)
    if (is_node_marker(f.path)) {
      node_installers.add_marker(f.path);
    } else if (f.path == "var/lib/dpkg/status") {
      std::string package;
      for_each_line(f.content, [&](std::string_view line) {
        if (line.starts_with("Package: "))
          package = std::string(line.substr(9));
        else if (line.starts_with("Version: ") && !package.empty())
          dpkg_status[package].version = std::string(line.substr(9));
        else if (line.starts_with("Architecture: ") && !package.empty())
          dpkg_status[package].architecture = std::string(line.substr(14));
      });
    }
  for (const auto& f : databases) {
    const std::string_view path = f.path;
    if (path.ends_with(".dist-info/RECORD"))
      read_record(f);
    else if (path.ends_with(".egg-info/installed-files.txt"))
      read_installed_files(f);
    else if (path.starts_with("var/lib/dpkg/info/") && path.ends_with(".list"))
      read_dpkg_list(f, dpkg_status);
    else if (dirname_of(path).ends_with("conda-meta") && path.ends_with(".json"))
      read_conda_meta(f);
    else if (path == "var/lib/rpm/rpmdb.sqlite" || path == "usr/lib/sysimage/rpm/rpmdb.sqlite")
      read_rpm(f);
    else if (is_node_manifest(path))
      read_package_json(f, node_installers);
  }
}

void Ownership::read_record(const CapturedFile& f) {
  const std::string_view info = dirname_of(f.path);
  const std::string site(dirname_of(info));
  Owner owner{"pip", "", "", "", ""};
  if (!parse_info_dir(basename_of(info), owner.dist, owner.version)) return;
  owner.package = owner.dist;
  const std::uint32_t id = add_owner(std::move(owner));
  top_levels_.emplace(std::string(info), id);  // its own metadata, listed or not
  for_each_line(f.content, [&](std::string_view line) {
    const std::string rel = record_path(line);
    python_.emplace(normalise_path(site + "/" + rel), id);
    // The distribution's top-level directories, for files it adds after
    // install that RECORD does not list (compiled caches, plugins).
    const auto slash = rel.find('/');
    if (slash == std::string::npos) return;
    const std::string_view top = std::string_view(rel).substr(0, slash);
    if (top == ".." || top == "." || top == "__pycache__" || top.ends_with(".dist-info") ||
        top.ends_with(".data"))
      return;
    top_levels_.emplace(site + "/" + std::string(top), id);
  });
}

void Ownership::read_installed_files(const CapturedFile& f) {
  const std::string info(dirname_of(f.path));
  Owner owner{"pip", "", "", "", ""};
  if (!parse_info_dir(basename_of(info), owner.dist, owner.version)) return;
  owner.package = owner.dist;
  const std::uint32_t id = add_owner(std::move(owner));
  top_levels_.emplace(info, id);  // its own metadata, listed or not
  for_each_line(f.content, [&](std::string_view line) {
    python_.emplace(normalise_path(info + "/" + std::string(line)), id);
  });
}

void Ownership::read_dpkg_list(const CapturedFile& f,
                               const std::unordered_map<std::string, DpkgStatus>& status) {
  std::string_view name = basename_of(f.path);
  name.remove_suffix(5);  // ".list"
  const std::string package(name.substr(0, name.find(':')));
  Owner owner{"apt", package, "", "", ""};
  if (const auto s = status.find(package); s != status.end()) {
    owner.version = s->second.version;
    owner.architecture = s->second.architecture;
  }
  std::vector<std::string> paths;
  for_each_line(f.content, [&](std::string_view line) { paths.push_back(normalise_path(line)); });
  own_system_files(owner, paths);
}

void Ownership::read_conda_meta(const CapturedFile& f) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(f.content);
  } catch (const nlohmann::json::exception&) {
    return;  // a damaged record owns nothing; its files stay unowned
  }
  if (!doc.is_object() || !doc.contains("name") || !doc["name"].is_string()) return;
  Owner owner{"conda", doc["name"].get<std::string>(), "", "", ""};
  if (doc.contains("version") && doc["version"].is_string())
    owner.version = doc["version"].get<std::string>();
  const std::string prefix(dirname_of(dirname_of(f.path)));
  const auto add = [&](std::vector<std::string>& out, const nlohmann::json& p) {
    if (p.is_string()) out.push_back(normalise_path(prefix + "/" + p.get<std::string>()));
  };
  std::vector<std::string> paths;
  if (const auto files = doc.find("files");
      files != doc.end() && files->is_array() && !files->empty()) {
    for (const auto& p : *files) add(paths, p);
  } else if (const auto data = doc.find("paths_data"); data != doc.end() && data->is_object()) {
    if (const auto list = data->find("paths"); list != data->end() && list->is_array())
      for (const auto& p : *list)
        if (p.is_object() && p.contains("_path")) add(paths, p["_path"]);
  }
  own_system_files(owner, paths);
}

void Ownership::read_rpm(const CapturedFile& f) {
  for (const RpmPackage& p : read_rpmdb(f.content)) {
    std::vector<std::string> paths;
    paths.reserve(p.files.size());
    for (const auto& file : p.files) paths.push_back(normalise_path(file));
    own_system_files(Owner{"rpm", p.name, p.version, "", ""}, paths);
  }
}

void Ownership::read_package_json(const CapturedFile& f, const NodeInstallers& installers) {
  const std::string_view dir = dirname_of(f.path);
  // The directory names the package where its package.json cannot: not
  // JSON, or without a name ("node_modules/@scope/name" -> "@scope/name").
  const std::string_view fallback =
      dir.substr(node_package_dir(f.path).modules_at + std::string_view("node_modules/").size());
  Owner owner{installers.of(dir), std::string(fallback), "", "", ""};
  try {
    const auto doc = nlohmann::json::parse(f.content);
    if (doc.is_object()) {
      if (const auto name = doc.find("name");
          name != doc.end() && name->is_string() && !name->get_ref<const std::string&>().empty())
        owner.package = name->get<std::string>();
      if (const auto version = doc.find("version"); version != doc.end() && version->is_string())
        owner.version = version->get<std::string>();
    }
  } catch (const nlohmann::json::exception&) {
    // not JSON: the directory's name, and no version
  }
  node_.emplace(std::string(dir), add_owner(std::move(owner)));
}

void Ownership::add_gem_homes(const MergedTree& tree, const std::vector<std::string>& homes) {
  for (const std::string& path : homes) {
    const std::string_view dir = std::string_view(path).substr(path.starts_with('/') ? 1 : 0);
    GemHome home{std::string(dir), {}};
    // Every gem the home names, by any of its places (a default gem has
    // only its specification there; its files are in Ruby's library).
    const FileNode* root = tree.find(dir);
    if (root == nullptr) continue;
    std::vector<std::pair<const FileNode*, std::string>> walk;
    for (const FileNode* child : root->children())
      walk.emplace_back(child, std::string(child->name()));
    while (!walk.empty()) {
      auto [node, in_home] = std::move(walk.back());
      walk.pop_back();
      // A file one level down names the gem whose directory this is.
      const std::string below = in_home + "/x";
      const std::string_view gem = gem_of(below);
      const std::string_view spec = gem_of(in_home);
      const std::string_view full = !gem.empty() ? gem : spec;
      if (!full.empty()) {
        if (!home.gems.contains(full)) {
          const GemName name = split_gem_name(full);
          const std::string key(full);
          home.gems.emplace(key, add_owner(Owner{gem_installer(), std::string(name.name),
                                                 std::string(name.version), "", ""}));
        }
        continue;
      }
      // Down to the depth of the deepest place (extensions/PLATFORM/ABI).
      if (std::count(in_home.begin(), in_home.end(), '/') < 3)
        for (const FileNode* child : node->children())
          walk.emplace_back(child, in_home + "/" + std::string(child->name()));
    }
    gem_homes_.push_back(std::move(home));
  }
  // A home inside another's tree (vendor/bundle in an app under a home) is
  // asked first.
  std::sort(gem_homes_.begin(), gem_homes_.end(),
            [](const GemHome& a, const GemHome& b) { return a.dir.size() > b.dir.size(); });
}

void Ownership::add_binaries(const std::vector<CapturedFile>& heads) {
  for (const auto& head : heads)
    if (const auto* found = std::any_cast<BinaryModule>(&head.inspected))
      binaries_.emplace(head.path,
                        add_owner(Owner{found->installer, found->package, found->version, "", ""}));
}

void Ownership::own_system_files(const Owner& package, const std::vector<std::string>& paths) {
  // The distributions it carries: the *.dist-info / *.egg-info directly in
  // a site dir, or, for one that owns a site directory without them, the
  // package's own name.
  std::vector<std::string> dists;
  std::string fallback;
  for (const auto& p : paths) {
    const std::string_view site = site_dir_of(p);
    if (site.empty()) continue;
    bool nested = false;
    const std::string_view top = top_level_of(p, site, nested);
    std::string dist, version;
    if (parse_info_dir(top, dist, version)) {
      if (std::find(dists.begin(), dists.end(), dist) == dists.end()) dists.push_back(dist);
    } else if (nested && top != "__pycache__") {
      fallback = dist_from_package(package.package);
    }
  }
  if (dists.empty() && !fallback.empty()) dists.push_back(fallback);
  // The package's first distribution is what the package is; the others
  // own their own top-level directories.
  Owner primary = package;
  if (!dists.empty()) primary.dist = dists.front();
  const std::uint32_t id = add_owner(std::move(primary));
  std::vector<std::pair<std::string, std::uint32_t>> by_name;  // normalised dist -> owner
  if (!dists.empty()) by_name.emplace_back(normalise_dist(dists.front()), id);
  for (std::size_t i = 1; i < dists.size(); ++i) {
    Owner extra = package;
    extra.dist = dists[i];
    by_name.emplace_back(normalise_dist(dists[i]), add_owner(std::move(extra)));
  }
  for (const auto& p : paths) {
    if (p.empty()) continue;
    system_.emplace(p, id);
    if (by_name.empty()) continue;
    std::uint32_t dist_owner = id;
    if (by_name.size() > 1) {
      if (const std::string_view site = site_dir_of(p); !site.empty()) {
        bool nested = false;
        std::string_view top = top_level_of(p, site, nested);
        std::string dist, version;
        std::string key = parse_info_dir(top, dist, version)
                              ? normalise_dist(dist)
                              : normalise_dist(top.substr(0, top.find('.')));
        for (const auto& [name, owner] : by_name)
          if (name == key) dist_owner = owner;
      }
    }
    python_.emplace(p, dist_owner);
  }
}

const Owner* Ownership::top_level_owner(std::string_view path) const {
  if (top_levels_.empty()) return nullptr;
  const std::string_view site = site_dir_of(path);
  if (site.empty()) return nullptr;
  bool nested = false;
  const std::string_view top = top_level_of(path, site, nested);
  if (!nested) return nullptr;
  const std::string_view key = path.substr(0, site.size() + 1 + top.size());
  const auto it = top_levels_.find(key);
  return it == top_levels_.end() ? nullptr : &owners_[it->second];
}

FileOwners Ownership::of(std::string_view path) const {
  FileOwners out;
  // The innermost package directory around the path that a package.json
  // names: a directory in node_modules that none names (.bin, a test
  // fixture's node_modules) is part of the package around it.
  if (!node_.empty())
    for (NodePackageDir at = node_package_dir(path); !at.dir.empty();
         at = node_package_dir(path, at.modules_at))
      if (const auto it = node_.find(at.dir); it != node_.end()) {
        out.node = &owners_[it->second];
        break;
      }
  for (const GemHome& home : gem_homes_)
    if (path.size() > home.dir.size() + 1 && path.starts_with(home.dir) &&
        path[home.dir.size()] == '/') {
      const std::string_view gem = gem_of(path.substr(home.dir.size() + 1));
      if (const auto it = home.gems.find(gem); !gem.empty() && it != home.gems.end())
        out.module = &owners_[it->second];
      break;
    }
  if (out.module == nullptr && !binaries_.empty())
    if (const auto it = binaries_.find(path); it != binaries_.end())
      out.module = &owners_[it->second];
  out.system = lookup_path(system_, path);
  out.python = lookup_path(python_, path);
  if (out.system == nullptr && out.python == nullptr) {
    // Byte-code compiled after install (Debian's py3compile, conda's and
    // pip's compileall) is in no list: it follows its source,
    // DIR/__pycache__/NAME.TAG.pyc -> DIR/NAME.py.
    if (const std::string source = pyc_source(path); !source.empty()) {
      out.system = lookup_path(system_, source);
      out.python = lookup_path(python_, source);
    }
  }
  if (out.python == nullptr) out.python = top_level_owner(path);
  return out;
}

const Owner* Ownership::lookup_path(const PathMap& map, std::string_view path) const {
  if (map.empty()) return nullptr;
  if (const auto it = map.find(path); it != map.end()) return &owners_[it->second];
  // dpkg lists may name /lib/x where a merged-/usr image keeps /usr/lib/x.
  if (path.starts_with("usr/"))
    if (const auto it = map.find(path.substr(4)); it != map.end()) return &owners_[it->second];
  return nullptr;
}

bool is_system_installer(std::string_view installer) {
  return installer == "apt" || installer == "conda" || installer == "rpm";
}

std::string pyc_source(std::string_view path) {
  if (!path.ends_with(".pyc")) return {};
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view dir = path.substr(0, slash);
  if (!(dir == "__pycache__" || dir.ends_with("/__pycache__"))) return {};
  std::string_view name = path.substr(slash + 1);
  name = name.substr(0, name.find('.'));  // "os.cpython-311.opt-1.pyc" -> "os"
  if (name.empty()) return {};
  const std::string_view parent =
      dir.substr(0, dir.size() - std::string_view("__pycache__").size());
  return std::string(parent) + std::string(name) + ".py";
}

}  // namespace imgsmith::attribution_detail
