// Path globs for rules and --ignore: "*" and "?" stay within one path
// segment, "**" crosses segments ("/a/**/b" also matches "/a/b").
#pragma once

#include <string>
#include <string_view>

namespace imgsmith {

class Glob {
 public:
  explicit Glob(std::string pattern);
  bool matches(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::string literal_;  // longest wildcard-free run: a cheap first test
};

}  // namespace imgsmith
