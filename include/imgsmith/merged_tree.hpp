// The image's filesystem as layers stack up, with OCI whiteout rules
// (REFERENCE §2). Every byte that stops being visible is recorded as waste,
// with the layer that added it and the layer that hid it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <memory_resource>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "imgsmith/layer_scan.hpp"

namespace imgsmith {

enum class HiddenBy : std::uint8_t {
  Deleted,      // a .wh.NAME whiteout
  Opaque,       // a .wh..wh..opq marker in the parent directory
  Overwritten,  // the same path written again
  Replaced,     // a directory replaced by a non-directory, or the reverse
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
};

struct FileNode {
  std::string name;
  EntryType type = EntryType::Dir;
  std::uint64_t size = 0;    // tar size (regular files only)
  std::int64_t inode = -1;   // content shared by hard links; -1 for no content
  std::uint32_t layer = 0;   // the layer that last wrote this node
  FileNode* parent = nullptr;
  // Keys view the children's own names. Allocated from the tree's arena:
  // images hold hundreds of thousands of paths, and freeing them one by one
  // cost as much as building them.
  std::pmr::unordered_map<std::string_view, FileNode*> children;

  explicit FileNode(std::pmr::memory_resource* arena) : children(arena) {}

  std::string path() const;  // "/usr/bin/env"
};

class MergedTree {
 public:
  MergedTree();

  // Applies one layer on top of what is there: opaque markers first, then
  // whiteouts (both hide lower layers only), then the layer's own entries.
  void apply(const LayerScan& layer, std::uint32_t index);

  MergedTree(const MergedTree&) = delete;
  MergedTree& operator=(const MergedTree&) = delete;

  const FileNode& root() const { return *root_; }
  // The node at "usr/lib" (normalised, no leading slash), or nullptr.
  const FileNode* find(std::string_view path) const;

  // Bytes visible in the tree, each hard-linked content once.
  std::uint64_t visible_bytes() const;
  std::uint64_t node_count() const { return nodes_; }
  const std::vector<WasteGroup>& waste() const { return waste_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Content of an inode: size and the layer that wrote it.
  struct Inode {
    std::uint64_t size = 0;
    std::uint32_t layer = 0;
    std::uint32_t names = 0;  // visible paths that point at it
  };
  const std::vector<Inode>& inodes() const { return inodes_; }

 private:
  FileNode* lookup(std::string_view path);
  FileNode* ensure_dir(std::string_view path, std::uint32_t layer);
  FileNode* walk_to_dir(std::string_view path, std::uint32_t layer);
  void remove_child(FileNode& parent, std::string_view name, std::uint32_t layer,
                    HiddenBy how, const std::string& at);
  void release(FileNode& node, std::uint32_t layer, HiddenBy how, const std::string& at);
  void add_entry(const TarEntry& entry, std::uint32_t layer);
  void record_waste(const std::string& at, HiddenBy how, const Inode& inode, std::uint32_t layer);

  FileNode* new_node(std::string_view name, EntryType type, std::uint32_t layer, FileNode* parent);

  std::pmr::monotonic_buffer_resource arena_;
  // Entries of one directory come together in a tar: the last directory
  // walked to is kept, and forgotten whenever anything is removed.
  std::string cached_dir_path_;
  FileNode* cached_dir_ = nullptr;
  std::deque<FileNode> storage_;  // stable addresses; hidden nodes stay until the tree goes
  FileNode* root_;
  std::vector<Inode> inodes_;
  std::vector<WasteGroup> waste_;
  std::map<std::tuple<std::string, int, std::uint32_t, std::uint32_t>, std::size_t> waste_index_;
  std::vector<std::string> warnings_;
  std::uint64_t nodes_ = 0;
};

// Splits "a/b/.wh.c" into its directory and name.
std::pair<std::string_view, std::string_view> split_path(std::string_view path);
inline constexpr std::string_view kWhiteoutPrefix = ".wh.";
inline constexpr std::string_view kOpaqueMarker = ".wh..wh..opq";
inline constexpr std::string_view kWhiteoutMetaPrefix = ".wh..wh.";

}  // namespace imgsmith
