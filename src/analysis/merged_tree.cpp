#include "imgsmith/merged_tree.hpp"

#include <cstring>
#include <new>
#include <tuple>

namespace imgsmith {

const char* hidden_by_name(HiddenBy how) {
  switch (how) {
    case HiddenBy::Deleted: return "deleted";
    case HiddenBy::Opaque: return "opaque";
    case HiddenBy::Overwritten: return "overwritten";
    case HiddenBy::Replaced: return "replaced";
    case HiddenBy::Readded: return "re-added";
  }
  return "deleted";
}

std::pair<std::string_view, std::string_view> split_path(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

std::string FileNode::path() const {
  if (parent == nullptr) return "/";
  std::vector<const FileNode*> chain;
  for (const FileNode* n = this; n->parent != nullptr; n = n->parent) chain.push_back(n);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    out.push_back('/');
    out += (*it)->name;
  }
  return out;
}

std::uint64_t ChildIndex::hash(const FileNode* parent, std::string_view name) {
  std::uint64_t h = std::hash<std::string_view>{}(name);
  h ^= static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(parent)) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

FileNode* ChildIndex::tombstone() {
  static FileNode erased;
  return &erased;
}

FileNode* ChildIndex::find(const FileNode* parent, std::string_view name, std::uint64_t h) const {
  if (slots_.empty()) return nullptr;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.node == nullptr) return nullptr;
    if (slot.hash == h && slot.node != tombstone() && slot.node->parent == parent &&
        slot.node->name == name)
      return slot.node;
  }
}

void ChildIndex::insert(FileNode* node, std::uint64_t h) {
  if ((used_ + 1) * 2 > slots_.size()) rehash(used_ + 1);
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = h & mask;
  while (slots_[i].node != nullptr) i = (i + 1) & mask;
  slots_[i] = Slot{h, node};
  ++used_;
}

void ChildIndex::erase(const FileNode* node, std::uint64_t h) {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask; slots_[i].node != nullptr; i = (i + 1) & mask)
    if (slots_[i].node == node) {
      slots_[i].node = tombstone();  // probes for other keys still pass through
      ++erased_;
      return;
    }
}

void ChildIndex::reserve(std::size_t nodes) {
  if ((used_ + nodes) * 2 > slots_.size()) rehash(used_ + nodes);
}

// Rehashes into a table at most half full with room for `want` nodes.
// Tombstones are dropped, and so are the nodes under a removed one: nothing
// looks below a hidden node. Until something is erased, no node is hidden.
void ChildIndex::rehash(std::size_t want) {
  std::size_t size = 1024;
  while (size < want * 2) size *= 2;
  std::pmr::vector<Slot> old(size, bulk_memory());
  old.swap(slots_);
  used_ = 0;
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.node == nullptr || slot.node == tombstone() || (erased_ != 0 && slot.node->hidden))
      continue;
    std::size_t i = slot.hash & mask;
    while (slots_[i].node != nullptr) i = (i + 1) & mask;
    slots_[i] = slot;
    ++used_;
  }
  erased_ = 0;
}

MergedTree::MergedTree() : root_(new (arena_.allocate(sizeof(FileNode), alignof(FileNode))) FileNode()) {}

// Nodes and their names live in the arena and are never destroyed one by
// one (they own nothing outside it); they go with the tree.
FileNode* MergedTree::new_node(std::string_view name, EntryType type, std::uint32_t layer,
                               FileNode* parent, std::uint64_t hash) {
  FileNode& node = *new (arena_.allocate(sizeof(FileNode), alignof(FileNode))) FileNode();
  if (!name.empty()) {
    char* text = static_cast<char*>(arena_.allocate(name.size(), 1));
    std::memcpy(text, name.data(), name.size());
    node.name = std::string_view(text, name.size());
  }
  node.type = type;
  node.layer = layer;
  node.parent = parent;
  node.prev_sibling = parent->last_child;
  if (parent->last_child != nullptr) parent->last_child->next_sibling = &node;
  else parent->first_child = &node;
  parent->last_child = &node;
  ++nodes_;
  index_.insert(&node, hash);
  return &node;
}

const FileNode* MergedTree::find(std::string_view path) const { return lookup(path); }

FileNode* MergedTree::lookup(std::string_view path) const {
  FileNode* node = root_;
  while (!path.empty() && node != nullptr) {
    const auto slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    node = child(node, part);
  }
  return node;
}

void MergedTree::record_waste(const std::string& at, HiddenBy how, const Inode& inode,
                              std::uint32_t layer) {
  const auto key = std::make_tuple(at, static_cast<int>(how), inode.layer, layer);
  auto [it, inserted] = waste_index_.try_emplace(key, waste_.size());
  if (inserted) waste_.push_back(WasteGroup{at, how, inode.layer, layer, 0, 0});
  WasteGroup& group = waste_[it->second];
  group.bytes += inode.size;
  group.files += 1;
}

// Drops one name of every content under `node`; content whose last name goes
// becomes waste, attributed to the operation at `at`.
void MergedTree::release(FileNode& node, std::uint32_t layer, HiddenBy how,
                         const std::string& at) {
  for (FileNode* c = node.first_child; c != nullptr; c = c->next_sibling) release(*c, layer, how, at);
  node.hidden = true;
  --nodes_;
  if (node.inode < 0) return;
  Inode& inode = inodes_[static_cast<std::size_t>(node.inode)];
  if (--inode.names == 0 && inode.size > 0) record_waste(at, how, inode, layer);
}

void MergedTree::remove_child(FileNode& parent, FileNode& child, std::uint32_t layer,
                              HiddenBy how, const std::string& at) {
  cached_dir_ = nullptr;
  index_.erase(&child, ChildIndex::hash(&parent, child.name));
  if (child.prev_sibling != nullptr) child.prev_sibling->next_sibling = child.next_sibling;
  else parent.first_child = child.next_sibling;
  if (child.next_sibling != nullptr) child.next_sibling->prev_sibling = child.prev_sibling;
  else parent.last_child = child.prev_sibling;
  release(child, layer, how, at);
}

// Walks to `path`, creating missing directories; a non-directory in the way
// is replaced, as the runtime's overlay would when the layer is extracted.
FileNode* MergedTree::ensure_dir(std::string_view path, std::uint32_t layer) {
  if (cached_dir_ != nullptr && path == cached_dir_path_) return cached_dir_;
  FileNode* node = walk_to_dir(path, layer);
  cached_dir_path_.assign(path);
  cached_dir_ = node;
  return node;
}

FileNode* MergedTree::walk_to_dir(std::string_view path, std::uint32_t layer) {
  FileNode* node = root_;
  const std::string_view full = path;
  std::size_t start = 0;
  while (start < full.size()) {
    const std::size_t slash = full.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? full.size() : slash;
    const std::string_view part = full.substr(start, end - start);
    const std::uint64_t h = ChildIndex::hash(node, part);
    FileNode* next = index_.find(node, part, h);
    if (next != nullptr && next->type != EntryType::Dir) {
      remove_child(*node, *next, layer, HiddenBy::Replaced, "/" + std::string(full.substr(0, end)));
      next = nullptr;
    }
    node = next != nullptr ? next : new_node(part, EntryType::Dir, layer, node, h);
    start = end + 1;
  }
  return node;
}

void MergedTree::add_entry(const TarEntry& entry, std::uint32_t layer) {
  const auto [dir, name] = split_path(entry.path);
  FileNode* parent = ensure_dir(dir, layer);
  const std::uint64_t h = ChildIndex::hash(parent, name);
  if (FileNode* found = index_.find(parent, name, h); found != nullptr) {
    FileNode& existing = *found;
    if (existing.type == EntryType::Dir && entry.type == EntryType::Dir) {
      existing.layer = layer;  // directory over directory merges
      return;
    }
    const bool same_kind = (existing.type == EntryType::Dir) == (entry.type == EntryType::Dir);
    const bool same_size_file = existing.type == EntryType::File && entry.type == EntryType::File &&
                                existing.size == entry.size && entry.size > 0;
    remove_child(*parent, existing, layer,
                 !same_kind ? HiddenBy::Replaced : same_size_file ? HiddenBy::Readded : HiddenBy::Overwritten,
                 "/" + std::string(entry.path));
  }
  if (entry.type == EntryType::Hardlink) {
    // A hard link's bytes belong to its target: count them once.
    const FileNode* target = lookup(entry.link);
    FileNode* node = new_node(name, entry.type, layer, parent, h);
    if (target != nullptr && target->inode >= 0) {
      node->inode = target->inode;
      ++inodes_[static_cast<std::size_t>(target->inode)].names;
    } else {
      warnings_.push_back("layer " + std::to_string(layer) + ": hard link /" +
                          std::string(entry.path) + " points at /" + std::string(entry.link) +
                          ", which is not a file here");
    }
    return;
  }
  FileNode* node = new_node(name, entry.type, layer, parent, h);
  if (entry.type == EntryType::File) {
    node->size = entry.size;
    node->inode = static_cast<std::int64_t>(inodes_.size());
    inodes_.push_back(Inode{entry.size, layer, 1});
  }
}

void MergedTree::apply(const LayerScan& layer, std::uint32_t index) {
  index_.reserve(layer.entries.size());
  // Opaque markers hide the lower children of their directory, wherever they
  // sit in the tar, and only lower ones: so they go first.
  for (const auto& e : layer.entries) {
    const auto [dir, name] = split_path(e.path);
    if (name != kOpaqueMarker) continue;
    FileNode* d = lookup(dir);
    if (d == nullptr || d->type != EntryType::Dir) continue;
    const std::string at = "/" + std::string(dir);
    while (d->first_child != nullptr) remove_child(*d, *d->first_child, index, HiddenBy::Opaque, at);
  }
  // Whiteouts, too, hide lower layers only; a file the same layer adds under
  // the same name survives.
  for (const auto& e : layer.entries) {
    const auto [dir, name] = split_path(e.path);
    if (!name.starts_with(kWhiteoutPrefix) || name.starts_with(kWhiteoutMetaPrefix)) continue;
    FileNode* d = lookup(dir);
    if (d == nullptr || d->type != EntryType::Dir) continue;
    const std::string target(name.substr(kWhiteoutPrefix.size()));
    const std::string at = dir.empty() ? "/" + target : "/" + std::string(dir) + "/" + target;
    if (FileNode* gone = child(d, target); gone != nullptr)
      remove_child(*d, *gone, index, HiddenBy::Deleted, at);
  }
  add_entries(layer.entries, index);
}

// A layer's own entries, in tar order; its markers were handled before.
void MergedTree::add_entries(std::span<const TarEntry> entries, std::uint32_t layer) {
  for (const auto& e : entries)
    if (!split_path(e.path).second.starts_with(kWhiteoutPrefix)) add_entry(e, layer);
}

void MergedTree::add_first_layer(std::span<const TarEntry> entries) {
  index_.reserve(entries.size());
  add_entries(entries, 0);
}

std::uint64_t MergedTree::visible_bytes() const {
  std::uint64_t total = 0;
  for (const auto& inode : inodes_)
    if (inode.names > 0) total += inode.size;
  return total;
}

}  // namespace imgsmith
