// What the merge of layers reports as hidden: which operation hid the bytes,
// and where. Apart from merged_tree.hpp so that the analysis's results can
// be read without the tree's internals (a change there rebuilds only what
// walks the tree).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace imgsmith {

enum class HiddenBy : std::uint8_t {
  Deleted,      // a .wh.NAME whiteout
  Opaque,       // a .wh..wh..opq marker in the parent directory
  Overwritten,  // the same path written again
  Replaced,     // a directory replaced by a non-directory, or the reverse
  // The same path written again as a file of the same size: most likely a
  // metadata-only change (chmod, chown, touch) that copied the file whole.
  // Analysis groups these by directory and layer pair.
  Readded,
};
const char* hidden_by_name(HiddenBy how);

// Bytes that one operation hid: `path` is where it happened (the whiteout's
// target, the opaque directory, the overwritten path), `files` how many
// regular files under it lost their last visible name.
struct WasteGroup {
  std::string path;
  HiddenBy how = HiddenBy::Deleted;
  std::uint32_t added_layer = 0;
  std::uint32_t hidden_layer = 0;
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
  // Every file under `path` is a package manager's own state
  // (is_package_manager_state): rewritten by each install, so hidden bytes
  // that dive counts but no finding reports as something to fix.
  bool package_state = false;
};

// A file that a package manager, or a tool its install scripts run, rewrites
// on every install: dpkg's status, debconf's templates, ld.so.cache,
// /etc/passwd... (data/package-manager-state.json, with the source of each).
bool is_package_manager_state(std::string_view path);

}  // namespace imgsmith
