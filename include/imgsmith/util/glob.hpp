// Path globs: the one matcher for attribution rules, origins, --ignore,
// budgets and findings. "*", "?" and character classes ("[abc]", "[a-z]",
// "[!abc]") stay within one path segment; "**" crosses segments, and "**/"
// also stands for no directory at all ("/a/**/b" matches "/a/b", and
// "**/NAME/**" matches everything under any directory called NAME).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace imgsmith {

class Glob {
 public:
  explicit Glob(std::string pattern);
  bool matches(std::string_view text) const;
  // The same, with the text's last segment (after its last '/') given, for
  // callers testing one path against many globs.
  bool matches(std::string_view text, std::string_view last_segment) const;
  const std::string& pattern() const { return pattern_; }

 private:
  // Cheap first tests (attribution runs every file past dozens of globs):
  // the literal text the pattern starts and ends with, and its longest
  // wildcard-free run, which must all appear in a match.
  std::string pattern_;
  std::string prefix_, suffix_, literal_;
  bool has_wildcard_ = false;
  // "**/NAME" with no other slash tests only the last path segment.
  bool basename_only_ = false, basename_has_wildcard_ = false;
  std::string basename_pattern_, basename_prefix_, basename_suffix_;
};

// Whether any of `globs` matches `text` (rules, --ignore).
bool matches_any(const std::vector<Glob>& globs, std::string_view text);

}  // namespace imgsmith
