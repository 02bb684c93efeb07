#include "imgsmith/glob.hpp"

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
  std::size_t start = 0;
  for (std::size_t i = 0; i <= pattern_.size(); ++i) {
    if (i == pattern_.size() || pattern_[i] == '*' || pattern_[i] == '?') {
      if (i - start > literal_.size()) literal_ = pattern_.substr(start, i - start);
      start = i + 1;
    }
  }
}

bool Glob::matches(std::string_view text) const {
  if (!literal_.empty() && text.find(literal_) == std::string_view::npos) return false;
  return match_from(pattern_, text);
}

}  // namespace imgsmith
