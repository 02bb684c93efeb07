// Attribution: every byte of the final tree goes to exactly one category
// (cuda, framework, python, os, app, cache, build-tools, model-weights,
// other) and a child within it, by rules that are data
// (data/attribution-rules.json, embedded; users add theirs with --rules).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "imgsmith/analysis.hpp"
#include "imgsmith/bulk_memory.hpp"
#include "imgsmith/text_arena.hpp"
#include "imgsmith/glob.hpp"

namespace imgsmith {

struct AttributionRule {
  std::string category;
  std::string child;  // may hold {dist} or {package}
  std::vector<Glob> paths, python_dists, deb_packages;
  std::optional<std::uint64_t> min_bytes;
  std::string source;  // "built-in" or the rules file, for --explain-style messages
};

struct OriginRule {
  std::string origin;
  std::vector<Glob> paths;
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
RuleSet with_user_rules_text(const RuleSet& base, const std::string& text, const std::string& label);

// The package databases a scan must capture for attribution.
bool is_package_database(std::string_view path, std::uint64_t size);

struct CategoryNode {
  std::string name;
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
  std::map<std::string, std::uint64_t> origins;  // cuda only: toolkit, pip, conda, bundled...
  std::vector<CategoryNode> children;            // largest first
};

struct AttributedFile {
  std::string_view path;  // "/usr/bin/env", in the Attribution's path_text
  std::uint64_t bytes = 0;
  std::uint32_t layer = 0;
  std::uint16_t category = 0;  // index into Attribution::categories
  std::string child;
  std::string origin;  // cuda only
};

struct Attribution {
  std::vector<CategoryNode> categories;  // fixed order; bytes sum to final_bytes
  std::pmr::vector<AttributedFile> files{bulk_memory()};  // every visible content once
  // What the files' paths view: an arena per thread that classified them.
  std::shared_ptr<std::vector<TextArena>> path_text;
  std::uint64_t total_bytes = 0;

  const CategoryNode* find(const std::string& category, const std::string& child = "") const;
};

Attribution attribute(const Analysis& analysis, const RuleSet& rules);

}  // namespace imgsmith
