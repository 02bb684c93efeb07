// How much of an image imgsmith will read: images are untrusted input (a
// save from anyone, a registry's answer), so every structure that could grow
// without end has a cap, and going over it is one InputError that names the
// input, the cap and the flag that raises it (--limit NAME=VALUE).
//
// The limits are the process's policy, set once by the command line before
// any image is opened (set_input_limits) and read wherever untrusted bytes
// are parsed: the resolver (documents, layer count), the tar scanner
// (entries, path length and depth) and the registry client (manifests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace imgsmith {

struct InputLimits {
  // As containers/image caps them: a manifest or index 4 MiB, a config
  // 8 MiB. Real ones are a few KiB (a config with a long history, tens).
  std::uint64_t manifest_bytes = 4ull << 20;
  std::uint64_t config_bytes = 8ull << 20;
  // Layers of one image. Docker's overlay2 stops at 128; 1,000 leaves room
  // for other builders and refuses a manifest listing one layer 10,000 times.
  std::uint64_t layers = 1000;
  // Entries of one layer. The largest real layers hold about a million
  // (conda environments, node_modules); each costs ~100 bytes of memory.
  std::uint64_t entries = 5'000'000;
  // One path, in bytes: PATH_MAX on Linux, where no longer path can exist.
  std::uint64_t path_bytes = 4096;
  // Directories one path may nest: the merge recurses once per level.
  std::uint64_t depth = 1000;
};

struct LimitInfo {
  const char* name;  // as --limit takes it
  std::uint64_t InputLimits::*field;
  bool bytes;        // a size (4MiB) rather than a count
  const char* what;  // for --help and errors
};
// Every limit, in the order --help lists them.
const std::vector<LimitInfo>& limit_table();

const InputLimits& input_limits();
void set_input_limits(const InputLimits& limits);

// Applies one "NAME=VALUE" (a size such as 8MiB, or a count) to `limits`;
// throws InputError naming the known limits when NAME or VALUE is wrong.
void apply_limit(InputLimits& limits, const std::string& assignment);

// "the manifest limit of 4 MiB (raise it with --limit manifest=SIZE)", for
// the error that reports a limit reached.
std::string limit_hint(const char* name);

}  // namespace imgsmith
