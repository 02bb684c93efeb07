// The image's filesystem as layers stack up, with OCI whiteout rules
// (REFERENCE §2). Every byte that stops being visible is recorded as waste,
// with the layer that added it and the layer that hid it.
#pragma once

#include <cstdint>
#include <map>
#include <memory_resource>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "imgsmith/bulk_memory.hpp"
#include "imgsmith/layer_scan.hpp"

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
};

struct FileNode {
  std::string_view name;     // in the tree's arena
  std::uint64_t size = 0;    // tar size (regular files only)
  std::int64_t inode = -1;   // content shared by hard links; -1 for no content
  FileNode* parent = nullptr;
  // Children in the order the layers added them. Finding a child by name
  // goes through the tree's index, so a list that is only walked suffices.
  FileNode* first_child = nullptr;
  FileNode* last_child = nullptr;
  FileNode* next_sibling = nullptr;
  FileNode* prev_sibling = nullptr;
  std::uint32_t layer = 0;   // the layer that last wrote this node
  EntryType type = EntryType::Dir;
  bool hidden = false;       // removed from the tree, with everything under it

  class ChildRange {
   public:
    class iterator {
     public:
      explicit iterator(const FileNode* at) : at_(at) {}
      const FileNode* operator*() const { return at_; }
      iterator& operator++() {
        at_ = at_->next_sibling;
        return *this;
      }
      bool operator!=(const iterator& other) const { return at_ != other.at_; }

     private:
      const FileNode* at_;
    };
    explicit ChildRange(const FileNode* first) : first_(first) {}
    iterator begin() const { return iterator(first_); }
    iterator end() const { return iterator(nullptr); }

   private:
    const FileNode* first_;
  };
  // for (const FileNode* child : node.children())
  ChildRange children() const { return ChildRange(first_child); }
  bool has_children() const { return first_child != nullptr; }

  std::string path() const;  // "/usr/bin/env"
};

// Every node by (parent, name): one open-addressed table for the whole tree,
// where a hash map per directory cost an allocation per entry and most of
// the merge's time.
class ChildIndex {
 public:
  static std::uint64_t hash(const FileNode* parent, std::string_view name);
  FileNode* find(const FileNode* parent, std::string_view name, std::uint64_t h) const;
  void insert(FileNode* node, std::uint64_t h);  // the node must not be there yet
  void erase(const FileNode* node, std::uint64_t h);
  // Room for `nodes` more without growing (a layer's entries, before it is applied).
  void reserve(std::size_t nodes);

 private:
  struct Slot {
    std::uint64_t hash = 0;
    FileNode* node = nullptr;  // nullptr: never used; tombstone(): erased
  };
  static FileNode* tombstone();
  void rehash(std::size_t want);

  std::pmr::vector<Slot> slots_{bulk_memory()};
  std::size_t used_ = 0;    // slots holding a node or a tombstone
  std::size_t erased_ = 0;  // erasures since the last rehash
};

class MergedTree {
 public:
  MergedTree();

  // Applies one layer on top of what is there: opaque markers first, then
  // whiteouts (both hide lower layers only), then the layer's own entries.
  void apply(const LayerScan& layer, std::uint32_t index);
  // Adds entries of the first layer, in tar order, while it is still being
  // read. Nothing lies below the first layer, so its whiteouts and opaque
  // markers hide nothing, and the result equals apply(layer, 0). Only for
  // a tree that nothing else has been applied to.
  void add_first_layer(std::span<const TarEntry> entries);

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
  std::span<const Inode> inodes() const { return inodes_; }

 private:
  FileNode* lookup(std::string_view path) const;
  FileNode* child(const FileNode* parent, std::string_view name) const {
    return index_.find(parent, name, ChildIndex::hash(parent, name));
  }
  FileNode* ensure_dir(std::string_view path, std::uint32_t layer);
  FileNode* walk_to_dir(std::string_view path, std::uint32_t layer);
  void remove_child(FileNode& parent, FileNode& child, std::uint32_t layer, HiddenBy how,
                    const std::string& at);
  void release(FileNode& node, std::uint32_t layer, HiddenBy how, const std::string& at);
  void add_entry(const TarEntry& entry, std::uint32_t layer);
  void add_entries(std::span<const TarEntry> entries, std::uint32_t layer);
  void record_waste(const std::string& at, HiddenBy how, const Inode& inode, std::uint32_t layer);

  FileNode* new_node(std::string_view name, EntryType type, std::uint32_t layer, FileNode* parent,
                     std::uint64_t hash);

  std::pmr::monotonic_buffer_resource arena_{bulk_memory()};
  ChildIndex index_;
  // Entries of one directory come together in a tar: the last directory
  // walked to is kept, and forgotten whenever anything is removed.
  std::string cached_dir_path_;
  FileNode* cached_dir_ = nullptr;
  // Nodes are placed in the arena (stable addresses); hidden nodes stay until the tree goes.
  FileNode* root_;
  std::pmr::vector<Inode> inodes_{bulk_memory()};
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
