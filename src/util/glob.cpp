#include "imgsmith/util/glob.hpp"

#include <cstring>

namespace imgsmith {
namespace {

// The length of the character class "[...]" that starts `p` (p[0] == '['),
// or 0 when it has no closing ']' (then '[' is an ordinary character, as in
// fnmatch). A ']' right after "[" or "[!" is a member, not the end.
std::size_t class_length(std::string_view p) {
  std::size_t i = 1;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) ++i;
  if (i < p.size() && p[i] == ']') ++i;
  while (i < p.size() && p[i] != ']') ++i;
  return i < p.size() ? i + 1 : 0;
}

// Whether `c` is in the class `cls` ("[...]", brackets included). A class
// never matches '/': like '*' and '?', it stays within one path segment.
bool in_class(std::string_view cls, char c) {
  if (c == '/') return false;
  std::size_t i = 1;
  const std::size_t end = cls.size() - 1;
  bool negate = false;
  if (cls[i] == '!' || cls[i] == '^') {
    negate = true;
    ++i;
  }
  bool hit = false;
  const auto uc = static_cast<unsigned char>(c);
  while (i < end) {
    const auto lo = static_cast<unsigned char>(cls[i]);
    if (i + 2 < end && cls[i + 1] == '-') {
      if (lo <= uc && uc <= static_cast<unsigned char>(cls[i + 2])) hit = true;
      i += 3;
    } else {
      if (lo == uc) hit = true;
      ++i;
    }
  }
  return hit != negate;
}

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
    } else if (p.front() == '[' && class_length(p) != 0) {
      const std::size_t n = class_length(p);
      if (!in_class(p.substr(0, n), t.front())) return false;
      p.remove_prefix(n);
      t.remove_prefix(1);
      continue;
    } else if (p.front() != t.front()) {
      return false;
    }
    p.remove_prefix(1);
    t.remove_prefix(1);
  }
  return t.empty();
}

// Marks which characters of `pattern` are literal (not part of '*', '?' or
// a character class).
std::vector<bool> literal_mask(std::string_view pattern) {
  std::vector<bool> literal(pattern.size(), true);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '*' || pattern[i] == '?') {
      literal[i] = false;
      // The '/' of "**/" is optional ("**/" also stands for no directory),
      // so it is no literal a match must contain.
      if (pattern[i] == '*' && i + 2 < pattern.size() && pattern[i + 1] == '*' &&
          pattern[i + 2] == '/') {
        literal[i + 1] = false;
        literal[i + 2] = false;
        i += 2;
      }
    } else if (pattern[i] == '[') {
      const std::size_t n = class_length(pattern.substr(i));
      for (std::size_t k = 0; k < n; ++k) literal[i + k] = false;
      if (n != 0) i += n - 1;
    }
  }
  return literal;
}

// The literal text a pattern starts with, ends with, and its longest
// literal run; `has_wildcard` says whether it has anything else.
struct LiteralParts {
  std::string prefix, suffix, longest;
  bool has_wildcard = false;
};

LiteralParts literal_parts(std::string_view pattern) {
  const std::vector<bool> literal = literal_mask(pattern);
  LiteralParts parts;
  std::size_t first = 0;
  while (first < pattern.size() && literal[first]) ++first;
  parts.prefix = pattern.substr(0, first);
  parts.has_wildcard = first < pattern.size();
  if (!parts.has_wildcard) return parts;
  std::size_t last = pattern.size();
  while (last > 0 && literal[last - 1]) --last;
  parts.suffix = pattern.substr(last);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= pattern.size(); ++i) {
    if (i == pattern.size() || !literal[i]) {
      if (i - start > parts.longest.size()) parts.longest = pattern.substr(start, i - start);
      start = i + 1;
    }
  }
  return parts;
}

}  // namespace

Glob::Glob(std::string pattern) : pattern_(std::move(pattern)) {
  const LiteralParts whole = literal_parts(pattern_);
  prefix_ = whole.prefix;
  suffix_ = whole.suffix;
  literal_ = whole.longest;
  has_wildcard_ = whole.has_wildcard;
  if (pattern_.starts_with("**/") && pattern_.find('/', 3) == std::string::npos &&
      pattern_.find("**", 3) == std::string::npos) {
    // The last segment alone decides: its own literal start and end are the
    // cheap tests ("**/core.py" ends in "core.py", not in "/core.py").
    basename_only_ = true;
    basename_pattern_ = pattern_.substr(3);
    const LiteralParts base = literal_parts(basename_pattern_);
    basename_prefix_ = base.prefix;
    basename_suffix_ = base.has_wildcard ? base.suffix : std::string();
    basename_has_wildcard_ = base.has_wildcard;
  }
}

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
  if (text.size() < suffix.size() || text[text.size() - suffix.size()] != suffix.front())
    return false;
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
    if (!basename_has_wildcard_) return base == basename_pattern_;
    if (!has_prefix(base, basename_prefix_) || !has_suffix(base, basename_suffix_)) return false;
    return match_from(basename_pattern_, base);
  }
  if (!has_wildcard_) return text == pattern_;
  if (!has_prefix(text, prefix_) || !has_suffix(text, suffix_)) return false;
  if (!literal_.empty() && !contains(text, literal_)) return false;
  return match_from(pattern_, text);
}

}  // namespace imgsmith
