// imgsmith.toml: a project's size policy, found from the working directory
// upward, so CI and developers apply the same gates. Flags override it.
//
//   [analyze]
//   max-size = "8GB"                 # also max-wasted, min-efficiency,
//   max-wasted = "10%"               # max-user-wasted-percent, dive-ci, rules
//   deny = ["devel-in-final"]
//   ignore = ["/opt/models/**"]
//   [analyze.budget]
//   cuda = "3GiB"
//   "cuda/cudnn" = "1GiB"
//   [diff]
//   max-growth = "5%"
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace imgsmith {

struct Policy {
  std::string path;  // the file it was read from
  std::optional<std::string> max_size, max_wasted, dive_ci, rules, max_growth;
  std::optional<double> min_efficiency, max_user_wasted_percent;
  std::vector<std::pair<std::string, std::string>> budgets;  // name, size text
  std::optional<std::vector<std::string>> deny, ignore;
};

// Reads a policy file. Relative paths in it (dive-ci, rules) are resolved
// against the file's directory. Throws InputError naming the file and line
// for bad TOML, an unknown key or a value of the wrong type.
Policy load_policy(const std::string& path);

// The nearest imgsmith.toml in `start` or a directory above it.
std::optional<std::string> find_policy(const std::string& start);

// The policy a command uses: the one given (--policy), none (--no-policy),
// or the nearest one from the working directory.
std::optional<Policy> command_policy(const std::string& given, bool disabled);

}  // namespace imgsmith
