// Who installed each file of an image: every package database the image
// holds, merged into one ownership map. Attribution asks it two questions
// per file: which system package owns it (dpkg, conda, rpm), which Python
// distribution it belongs to, whoever installed that distribution, which
// Node.js package (npm, pnpm, Yarn) it is part of, and which Ruby gem or Go
// or Rust program it is (a gem by its place in a gem home, a program by the
// module information it embeds).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "imgsmith/analysis/merged_tree.hpp"
#include "imgsmith/source/layer_scan.hpp"
#include "node_modules.hpp"

namespace imgsmith::attribution_detail {

// An installed package, as its own database names it.
struct Owner {
  std::string
      installer;        // "pip", "apt", "conda", "rpm", "npm", "pnpm", "yarn", "gem", "go", "cargo"
  std::string package;  // the installer's name: "python3-torch", "pytorch", "torch", "@next/env"
  std::string version;  // "" where the database does not say
  // The Python distribution the package is, named as pip names it
  // ("numpy" for Debian's python3-numpy); "" for a package that is none.
  std::string dist;
  std::string architecture;  // dpkg's Architecture ("amd64", "all"); "" elsewhere
};

// What attribution needs to know about one file.
struct FileOwners {
  const Owner* system = nullptr;  // dpkg, conda or rpm
  const Owner* python = nullptr;  // pip's RECORD/installed-files, or the system package's dist
  const Owner* node = nullptr;    // the package directory in node_modules it is under
  const Owner* module = nullptr;  // the gem it is part of, or the Go or Rust program it is
  // The distribution's name for rules and children: python's dist.
  const std::string* dist() const {
    if (python != nullptr && !python->dist.empty()) return &python->dist;
    return nullptr;
  }
  // "apt", "conda", "rpm", "pip", "npm", "pnpm", "yarn", "gem", "go", "cargo", or
  // "unowned".
  std::string_view installer() const {
    if (system != nullptr) return system->installer;
    if (python != nullptr) return python->installer;
    if (node != nullptr) return node->installer;
    if (module != nullptr) return module->installer;
    return "unowned";
  }
  // The package the file counts for, in the order installer() asks.
  const Owner* primary() const {
    if (system != nullptr) return system;
    if (python != nullptr) return python;
    if (node != nullptr) return node;
    return module;
  }
};

class Ownership {
 public:
  explicit Ownership(const std::vector<CapturedFile>& databases);
  // The gems of the gem homes found in the tree (directories holding
  // "specifications" and "gems"), each home's gems named by its entries.
  void add_gem_homes(const MergedTree& tree, const std::vector<std::string>& homes);
  // The Go and Rust programs among the captured file heads, by what their
  // inspection found (a BinaryModule).
  void add_binaries(const std::vector<CapturedFile>& heads);
  // `path` is normalised (no leading '/'), as in the tree.
  FileOwners of(std::string_view path) const;
  const std::vector<Owner>& owners() const { return owners_; }

 private:
  struct PathHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using PathMap = std::unordered_map<std::string, std::uint32_t, PathHash, std::equal_to<>>;

  std::uint32_t add_owner(Owner owner);
  void read_record(const CapturedFile& f);
  void read_installed_files(const CapturedFile& f);
  // What dpkg's status file says of one package.
  struct DpkgStatus {
    std::string version, architecture;
  };
  void read_dpkg_list(const CapturedFile& f,
                      const std::unordered_map<std::string, DpkgStatus>& status);
  void read_conda_meta(const CapturedFile& f);
  void read_rpm(const CapturedFile& f);
  void read_package_json(const CapturedFile& f, const NodeInstallers& installers);
  // A system package that installs Python distributions: one Owner per
  // distribution, chosen per top-level directory of its site files.
  void own_system_files(const Owner& package, const std::vector<std::string>& paths);
  const Owner* top_level_owner(std::string_view path) const;
  const Owner* lookup_path(const PathMap& map, std::string_view path) const;

  std::vector<Owner> owners_;
  PathMap system_;      // path -> owner (dpkg, conda, rpm)
  PathMap python_;      // path -> owner (pip RECORD, egg-info installed-files, system dists)
  PathMap top_levels_;  // "<site dir>/<top-level name>" -> owner, for files no list names
  PathMap node_;        // a package's directory in node_modules -> owner
  PathMap binaries_;    // a Go or Rust program -> owner
  struct GemHome {
    std::string dir;  // "usr/local/bundle"
    PathMap gems;     // a gem's full name ("rack-3.0.8") -> owner
  };
  std::vector<GemHome> gem_homes_;  // innermost first
};

// Whether an installer lists system files (dpkg, conda, rpm), unlike the
// language installers (pip, npm, pnpm, yarn).
bool is_system_installer(std::string_view installer);

// The directory holding a path's site-packages or dist-packages part
// ("usr/lib/python3/dist-packages"), or "" when it is under neither.
std::string_view site_dir_of(std::string_view path);

// The source a byte-code file was compiled from ("a/__pycache__/m.cpython-311.pyc"
// -> "a/m.py"), or "" for any other path.
std::string pyc_source(std::string_view path);

// Python distribution names compare case-insensitively with - and . as _.
std::string normalise_dist(std::string_view name);

}  // namespace imgsmith::attribution_detail
