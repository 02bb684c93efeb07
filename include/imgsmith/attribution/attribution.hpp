// Attribution: every byte of the final tree goes to exactly one category
// (cuda, framework, python, node, ruby, go, rust, os, app, cache,
// build-tools, model-weights, other) and a child within it, by rules that are data
// (data/attribution-rules.json, embedded; users add theirs with --rules).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/util/bulk_memory.hpp"
#include "imgsmith/util/glob.hpp"
#include "imgsmith/util/text_arena.hpp"

namespace imgsmith {

struct AttributionRule {
  std::string category;
  std::string child;  // may hold {dist}, {node} or {package}
  std::vector<Glob> paths, python_dists, deb_packages;
  std::vector<Glob> node_packages;        // the Node.js package (node_modules) holding the file
  std::vector<Glob> packages;             // the system package (dpkg or conda) owning the file
  std::vector<Glob> installers;           // "pip", "apt", "conda", "npm", "gem", "go", "unowned"
  std::vector<Glob> except_python_dists;  // not when the file belongs to one of these
  std::vector<Glob> except_packages;      // not when one of these system packages owns it
  std::vector<Glob> content;  // the format its first bytes show: safetensors, pytorch, ...
  std::optional<std::uint64_t> min_bytes;
  std::string source;  // "built-in" or the rules file, for --explain-style messages
};

// A CUDA library's origin: the first rule whose conditions all hold.
struct OriginRule {
  std::string origin;
  std::vector<Glob> paths;
  std::vector<Glob> installers;  // "pip", "apt", "conda", "unowned"
};

struct RuleSet {
  std::vector<std::string> categories;  // the fixed top-level names, in report order
  std::vector<OriginRule> origins;
  std::vector<AttributionRule> rules;
};

// The rules compiled into imgsmith.
const RuleSet& builtin_rules();
// Reads a user rules file (the same JSON shape as data/attribution-rules.json,
// with "rules" and optionally "origins"); its rules and origins are tried
// before those of `base`. Throws InputError naming the file.
RuleSet with_user_rules(const RuleSet& base, const std::string& path);
// The same from text (tests).
RuleSet with_user_rules_text(const RuleSet& base, const std::string& text,
                             const std::string& label);

// The package databases a scan must capture for attribution: kCaptureAll
// for one, 0 otherwise.
std::uint64_t is_package_database(std::string_view path, std::uint64_t size);
// What attribution needs of each file: package databases whole, and the
// first bytes of every file large enough to be model weights, which are
// judged by their content (model_format.hpp).
std::uint64_t attribution_capture(std::string_view path, std::uint64_t size);
// attribution_capture with its inspector: what reads Go's and cargo
// auditable's module information from the ELF files among those heads
// (inspect_binary_module), kept in CapturedFile::inspected as a BinaryModule.
CaptureFn attribution_capture_inspected();

struct CategoryNode {
  std::string name;
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
  // Where the bytes came from: for cuda toolkit, pip, conda, bundled, apt...;
  // for framework and python the installer (pip, apt, conda, unowned).
  std::map<std::string, std::uint64_t> origins;
  std::vector<CategoryNode> children;  // largest first
};

struct AttributedFile {
  std::string_view path;  // "/usr/bin/env", in the Attribution's path_text
  std::uint64_t bytes = 0;
  std::uint32_t layer = 0;
  std::uint16_t category = 0;  // index into Attribution::categories
  std::string child;
  std::string origin;         // cuda, framework and python only
  std::int32_t package = -1;  // index into Attribution::packages; -1: no database lists it
};

// A package an installer's database in the image lists (dpkg, rpm, conda,
// pip's RECORD, a node_modules package.json, a gem home, a Go or Rust
// program's module information), with the visible files attributed to it.
struct InstalledPackage {
  std::string
      installer;        // "apt", "rpm", "conda", "pip", "npm", "pnpm", "yarn", "gem", "go", "cargo"
  std::string name;     // as that installer names it
  std::string version;  // "" where its database does not say
  std::uint64_t files = 0, bytes = 0;
  std::string architecture;  // dpkg's Architecture ("amd64", "all"); "" for other installers
};

struct Attribution {
  std::vector<CategoryNode> categories;  // fixed order; bytes sum to final_bytes
  // Every visible content once, in tree order (empty when the files were
  // handed to a sink instead).
  std::pmr::vector<AttributedFile> files{bulk_memory()};
  // What the files' paths view: arenas of the threads that classified them.
  std::shared_ptr<std::vector<TextArena>> path_text;
  std::uint64_t total_bytes = 0;
  // Every package the image's databases list, by installer, name and
  // version (a saved report's, as its JSON lists them); `packages_listed`
  // false for a saved report that has no list (an older version's).
  std::vector<InstalledPackage> packages;
  bool packages_listed = false;

  const CategoryNode* find(const std::string& category, const std::string& child = "") const;
};

Attribution attribute(const Analysis& analysis, const RuleSet& rules);

// Receives each attributed file, in tree order, with the name of its
// category. The file (its path included) is only valid during the call.
using AttributedFileSink =
    std::function<void(const AttributedFile& file, const std::string& category)>;
// attribute() that hands each file to `each` instead of keeping it: the
// categories are the same, Attribution::files stays empty, and memory does
// not grow with the number of files (an image can hold millions).
Attribution attribute(const Analysis& analysis, const RuleSet& rules,
                      const AttributedFileSink& each);

}  // namespace imgsmith
