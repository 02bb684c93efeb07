// The image's filesystem as layers stack up, with OCI whiteout rules
// (docs/whiteouts.md). Every byte that stops being visible is recorded as waste,
// with the layer that added it and the layer that hid it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "imgsmith/analysis/waste.hpp"
#include "imgsmith/source/layer_scan.hpp"
#include "imgsmith/util/bulk_memory.hpp"

namespace imgsmith {

// A node of the merged tree. An image can hold millions, so a node is 16
// bytes and its name follows it (its length first, 7 bits a byte, low bits
// first). Nodes lie in one region that never moves (GrowingRegion) and
// point at one another by signed offsets from themselves, in 4-byte units:
// 32 bits each, where pointers took 64.
//
// A directory's children form a ring in the order the layers added them:
// the directory points at the last, and each child at the next (the last
// at the first). A child that is removed stays in the ring, hidden, and
// is skipped: removing one from a singly linked ring would mean walking
// it, and a removed node's memory is kept anyway.
class FileNode {
 public:
  FileNode() = default;
  // A copy would lose the name, which lives after the node, and the
  // offsets, which are relative to where the node is.
  FileNode(const FileNode&) = delete;
  FileNode& operator=(const FileNode&) = delete;

  EntryType type = EntryType::Dir;
  bool hidden = false;      // removed from the tree, with everything under it
  std::uint16_t layer = 0;  // the layer that last wrote this node (MergedTree::kMaxLayers)

  std::string_view name() const {
    const auto* at = reinterpret_cast<const unsigned char*>(this + 1);
    std::size_t size = 0;
    for (unsigned shift = 0;; shift += 7) {
      size |= static_cast<std::size_t>(*at & 0x7F) << shift;
      if ((*at++ & 0x80) == 0) break;
    }
    return {reinterpret_cast<const char*>(at), size};
  }
  // nullptr for the root.
  const FileNode* parent() const { return parent_ == 0 ? nullptr : at(parent_); }
  // The content a regular file or hard link shows (MergedTree::inodes()), or -1.
  std::int32_t inode() const { return type == EntryType::Dir ? -1 : link_; }

  class ChildRange {
   public:
    class iterator {
     public:
      iterator(const FileNode* at, const FileNode* last) : at_(at), last_(last) { skip_hidden(); }
      const FileNode* operator*() const { return at_; }
      iterator& operator++() {
        step();
        skip_hidden();
        return *this;
      }
      bool operator!=(const iterator& other) const { return at_ != other.at_; }
      bool operator==(const iterator& other) const { return at_ == other.at_; }
      bool at_end() const { return at_ == nullptr; }

     private:
      void step() { at_ = at_ == last_ ? nullptr : at_->at(at_->next_); }
      void skip_hidden() {
        while (at_ != nullptr && at_->hidden) step();
      }
      const FileNode* at_;
      const FileNode* last_;
    };
    explicit ChildRange(const FileNode* last) : last_(last) {}
    iterator begin() const {
      return last_ == nullptr ? end() : iterator(last_->at(last_->next_), last_);
    }
    iterator end() const { return iterator(nullptr, nullptr); }

   private:
    const FileNode* last_;
  };
  // for (const FileNode* child : node.children()): the visible ones.
  ChildRange children() const { return ChildRange(last_child()); }
  bool has_children() const { return children().begin() != children().end(); }

  std::string path() const;  // "/usr/bin/env"

 private:
  friend class MergedTree;
  const FileNode* at(std::int32_t offset) const {
    return reinterpret_cast<const FileNode*>(reinterpret_cast<const char*>(this) +
                                             std::ptrdiff_t{offset} * 4);
  }
  FileNode* at(std::int32_t offset) {
    return reinterpret_cast<FileNode*>(reinterpret_cast<char*>(this) + std::ptrdiff_t{offset} * 4);
  }
  std::int32_t offset_to(const FileNode* other) const {
    return static_cast<std::int32_t>(
        (reinterpret_cast<const char*>(other) - reinterpret_cast<const char*>(this)) / 4);
  }
  const FileNode* last_child() const {
    return type == EntryType::Dir && link_ != 0 ? at(link_) : nullptr;
  }

  std::int32_t parent_ = 0;  // 0 for the root (a node is never its own parent)
  std::int32_t next_ = 0;    // the next sibling in the ring; 0 for an only child
  // A directory's last child (0: none), or the content of any other node (-1: none).
  std::int32_t link_ = 0;
};
static_assert(sizeof(FileNode) == 16);

// Every node by (parent, name): one open-addressed table for the whole tree,
// where a hash map per directory cost an allocation per entry and most of
// the merge's time. A slot is 32 bits of the key's hash, in one array, and
// the node's place in the tree's region, in another: probing reads only the
// first, and a slot costs 8 bytes. The table fills to 7/8 before it grows:
// the hashes a probe reads sit side by side, so a long probe is a cache
// line or two.
class ChildIndex {
 public:
  // The key's hash as the table keeps it: never kEmpty or kErased.
  static std::uint32_t hash(const FileNode* parent, std::string_view name);
  // `base` is the start of the region the nodes lie in (ids are 4-byte units from it).
  explicit ChildIndex(const char* base) : base_(base) {}
  FileNode* find(const FileNode* parent, std::string_view name, std::uint32_t h) const;
  void insert(const FileNode* node, std::uint32_t h);  // the node must not be there yet
  void erase(const FileNode* node, std::uint32_t h);
  // Room for `nodes` more without growing (a layer's entries, before it is applied).
  void reserve(std::size_t nodes);

 private:
  static constexpr std::uint32_t kEmpty = 0, kErased = 1;
  std::size_t home(std::uint32_t h) const { return (h * 0x9E3779B9u) >> shift_; }
  bool too_full(std::size_t used) const { return used > hashes_.size() / 8 * 7; }
  void rehash(std::size_t want);
  FileNode* node(std::uint32_t id) const {
    return reinterpret_cast<FileNode*>(const_cast<char*>(base_) + std::size_t{id} * 4);
  }
  std::uint32_t id(const FileNode* node) const {
    return static_cast<std::uint32_t>((reinterpret_cast<const char*>(node) - base_) / 4);
  }

  const char* base_;
  std::pmr::vector<std::uint32_t> hashes_{bulk_memory()};  // kEmpty: never used; kErased: erased
  std::pmr::vector<std::uint32_t> ids_{bulk_memory()};
  unsigned shift_ = 32;     // 32 - log2(slots)
  std::size_t used_ = 0;    // slots holding a node or a tombstone
  std::size_t erased_ = 0;  // erasures since the last rehash
};

class MergedTree {
 public:
  // Layers a tree can stack (FileNode::layer); Docker stops at 127.
  static constexpr std::uint32_t kMaxLayers = UINT16_MAX + 1;

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
  // The size of a regular file (its content's), 0 for any other node.
  std::uint64_t file_size(const FileNode& node) const {
    return node.type == EntryType::File && node.inode() >= 0
               ? inodes()[static_cast<std::size_t>(node.inode())].size
               : 0;
  }
  std::uint64_t node_count() const { return nodes_; }
  const std::vector<WasteGroup>& waste() const { return waste_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Content of an inode: size and the layer that wrote it, in 12 bytes
  // (one per file: millions).
#pragma pack(push, 4)
  struct Inode {
    std::uint64_t size : 48;  // at most kMaxFileSize
    std::uint16_t layer;      // below kMaxLayers
    std::uint32_t names;      // visible paths that point at it
  };
#pragma pack(pop)
  static_assert(sizeof(Inode) == 12);
  static constexpr std::uint64_t kMaxFileSize = (std::uint64_t{1} << 48) - 1;
  std::span<const Inode> inodes() const {
    return {reinterpret_cast<const Inode*>(inode_region_.base()), inode_count_};
  }

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
                     std::uint32_t hash);
  Inode& inode(std::int32_t id) { return reinterpret_cast<Inode*>(inode_region_.base())[id]; }
  std::int32_t new_inode(std::uint64_t size, std::uint32_t layer);

  // Nodes, each followed by its name, and the inodes: regions that never
  // move, so nodes can point at one another by 32-bit offsets. Nothing in
  // them is destroyed one by one (they own nothing outside); hidden nodes
  // stay until the tree goes.
  GrowingRegion node_region_;
  GrowingRegion inode_region_;
  std::size_t inode_count_ = 0;
  ChildIndex index_;
  FileNode* root_;
  // Entries of one directory come together in a tar: the last directory
  // walked to is kept, and forgotten whenever anything is removed.
  std::string cached_dir_path_;
  FileNode* cached_dir_ = nullptr;
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
