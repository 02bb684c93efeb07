#include "imgsmith/glob.hpp"

#include <cstring>

namespace imgsmith {
namespace {

bool match_from(std::string_view p, std::string_view t) {
  while (!p.empty()) {
    if (p.starts_with("**")) {
      std::string_view rest = p.substr(2);
      // "**/" may also stand for no directory at all.
      if (rest.starts_with('/') && match_from(rest.substr(1), t)) return true;
      for (std::size_t i = 0; i <= t.size(); ++i)
        if (match_from(rest, t.substr(i))) return true;
      return false;
    }
    if (p.front() == '*') {
      std::string_view rest = p.substr(1);
      for (std::size_t i = 0; i <= t.size(); ++i) {
        if (match_from(rest, t.substr(i))) return true;
        if (i < t.size() && t[i] == '/') break;
      }
      return false;
    }
    if (t.empty()) return false;
    if (p.front() == '?') {
      if (t.front() == '/') return false;
    } else if (p.front() != t.front()) {
      return false;
    }
    p.remove_prefix(1);
    t.remove_prefix(1);
  }
  return t.empty();
}

}  // namespace

Glob::Glob(std::string pattern) : pattern_(std::move(pattern)) {
  const std::size_t first = pattern_.find_first_of("*?");
  const std::size_t last = pattern_.find_last_of("*?");
  prefix_ = pattern_.substr(0, first);
  if (last != std::string::npos) suffix_ = pattern_.substr(last + 1);
  if (pattern_.starts_with("**/") && pattern_.find('/', 3) == std::string::npos &&
      pattern_.find("**", 3) == std::string::npos) {
    basename_only_ = true;
    basename_pattern_ = pattern_.substr(3);
    basename_prefix_ = basename_pattern_.substr(0, basename_pattern_.find_first_of("*?"));
  }
  std::size_t start = 0;
  for (std::size_t i = 0; i <= pattern_.size(); ++i) {
    if (i == pattern_.size() || pattern_[i] == '*' || pattern_[i] == '?') {
      if (i - start > literal_.size()) literal_ = pattern_.substr(start, i - start);
      start = i + 1;
    }
  }
}

static bool contains(std::string_view text, std::string_view needle);

// Substring test tuned for short paths: jump between occurrences of the
// needle's first character, compare the rest.
static bool contains(std::string_view text, std::string_view needle) {
  if (needle.size() > text.size()) return false;
  const char* p = text.data();
  const char* end = text.data() + text.size() - needle.size() + 1;
  while (p < end) {
    p = static_cast<const char*>(std::memchr(p, needle[0], static_cast<std::size_t>(end - p)));
    if (p == nullptr) return false;
    if (std::memcmp(p + 1, needle.data() + 1, needle.size() - 1) == 0) return true;
    ++p;
  }
  return false;
}

// starts_with/ends_with with a one-character test first: most globs fail
// here, for most paths, and a call to memcmp costs more than the test.
static bool has_prefix(std::string_view text, const std::string& prefix) {
  if (prefix.empty()) return true;
  if (text.size() < prefix.size() || text[prefix.size() - 1] != prefix.back()) return false;
  return std::memcmp(text.data(), prefix.data(), prefix.size()) == 0;
}

static bool has_suffix(std::string_view text, const std::string& suffix) {
  if (suffix.empty()) return true;
  if (text.size() < suffix.size() || text[text.size() - suffix.size()] != suffix.front()) return false;
  return std::memcmp(text.data() + text.size() - suffix.size(), suffix.data(), suffix.size()) == 0;
}

bool matches_any(const std::vector<Glob>& globs, std::string_view text) {
  for (const Glob& g : globs)
    if (g.matches(text)) return true;
  return false;
}

bool Glob::matches(std::string_view text) const {
  const auto slash = text.rfind('/');
  return matches(text, slash == std::string_view::npos ? text : text.substr(slash + 1));
}

bool Glob::matches(std::string_view text, std::string_view base) const {
  if (basename_only_) {
    if (!has_prefix(base, basename_prefix_) || !has_suffix(base, suffix_)) return false;
    return match_from(basename_pattern_, base);
  }
  if (!has_prefix(text, prefix_) || !has_suffix(text, suffix_)) return false;
  if (prefix_.size() == pattern_.size()) return text.size() == pattern_.size();  // no wildcard
  if (!literal_.empty() && !contains(text, literal_)) return false;
  return match_from(pattern_, text);
}

}  // namespace imgsmith
