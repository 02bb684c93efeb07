// imgsmith.toml: a project's size policy, found from the working directory
// upward, so CI and developers apply the same gates. Flags override it.
//
//   [analyze]
//   max-size = "8GB"                 # also max-wasted, min-efficiency,
//   max-wasted = "10%"               # max-user-wasted-percent, dive-ci, rules
//   deny = ["devel-in-final"]
//   ignore = ["/opt/models/**"]
//   fits = "L4"                      # also max-vram, precision
//   gpus = ["H100", "L4"]            # every CUDA binary runs on these
//   [analyze.budget]
//   cuda = "3GiB"
//   "cuda/cudnn" = "1GiB"
//   [diff]
//   max-growth = "5%"
//   [gen]                            # what would otherwise be gen's flags
//   cuda = "12.4"                    # also flavor, requirements
//   cmd = "python -m app"            # or ["python", "-m", "app"]
//   port = 8080
//   system_packages = ["ffmpeg", "libgl1"]
//   extras = ["gpu"]
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "imgsmith/gen/gen.hpp"

namespace imgsmith {

struct Policy {
  std::string path;  // the file it was read from
  std::optional<std::string> max_size, max_wasted, dive_ci, rules, max_growth;
  std::optional<std::string> max_vram, fits, precision;  // the models' VRAM gates
  std::optional<std::vector<std::string>> gpus;          // the kernels' --gpu gates
  std::optional<double> min_efficiency, max_user_wasted_percent;
  std::vector<std::pair<std::string, std::string>> budgets;  // name, size text
  std::optional<std::vector<std::string>> deny, ignore;
};

// Reads a policy file. Relative paths in it (dive-ci, rules) are resolved
// against the file's directory. Throws InputError naming the file and line
// for bad TOML, an unknown key or a value of the wrong type.
Policy load_policy(const std::string& path);

// The [gen] table: the choices a team would otherwise pass to `imgsmith gen`
// as flags, committed once. Flags override it.
struct GenPolicy {
  std::string path;  // the file it was read from
  std::optional<std::string> cuda, flavor, requirements;
  std::optional<std::vector<std::string>> cmd;  // words, as --cmd splits them
  std::optional<int> port;
  std::vector<std::string> system_packages;  // Debian packages, as apt.txt lists them
  std::vector<std::string> extras;           // the project's optional dependency groups to install
  std::map<std::string, std::string> packages;  // what an unknown package needs from the GPU image
  std::vector<std::string> writable;            // paths under the project the app writes
  std::vector<std::string> gpus;                // the GPUs the image must run on (--gpu)
};

// The [gen] table of the nearest imgsmith.toml in `project_dir` or above it;
// nothing when there is no file or no table. Throws InputError naming the
// file, line and key for a value gen cannot use.
std::optional<GenPolicy> load_gen_policy(const std::string& project_dir);

// Fills from `g` what the flags left unset (flags override the file): an
// empty cuda, requirements or cmd, port 0, and a flavor of "" (then "auto").
void apply_gen_policy(const GenPolicy& g, gen::Options& options, std::string& requirements);

// The nearest imgsmith.toml in `start` or a directory above it.
std::optional<std::string> find_policy(const std::string& start);

// The policy a command uses: the one given (--policy), none (--no-policy),
// or the nearest one from the working directory.
std::optional<Policy> command_policy(const std::string& given, bool disabled);

}  // namespace imgsmith
