#include "imgsmith/analysis/merged_tree.hpp"

#include <climits>
#include <cstring>
#include <new>
#include <stdexcept>
#include <tuple>

#include "imgsmith/util/error.hpp"

namespace imgsmith {

const char* hidden_by_name(HiddenBy how) {
  switch (how) {
    case HiddenBy::Deleted:
      return "deleted";
    case HiddenBy::Opaque:
      return "opaque";
    case HiddenBy::Overwritten:
      return "overwritten";
    case HiddenBy::Replaced:
      return "replaced";
    case HiddenBy::Readded:
      return "re-added";
  }
  return "deleted";
}

namespace {

// "/" and the path: where a waste group happened. Built piece by piece,
// where `"/" + std::string(path)` makes GCC 12 at -O3 warn of an overlap
// that cannot happen (-Wrestrict).
std::string rooted(std::string_view path) {
  std::string out;
  out.reserve(path.size() + 1);
  out.push_back('/');
  out.append(path);
  return out;
}

// The same for `name` in directory `dir`.
std::string rooted(std::string_view dir, std::string_view name) {
  std::string out = rooted(dir);
  if (!dir.empty()) out.push_back('/');
  out.append(name);
  return out;
}

}  // namespace

std::pair<std::string_view, std::string_view> split_path(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

std::string FileNode::path() const {
  if (parent() == nullptr) return "/";
  std::vector<const FileNode*> chain;
  for (const FileNode* n = this; n->parent() != nullptr; n = n->parent()) chain.push_back(n);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    out.push_back('/');
    out += (*it)->name();
  }
  return out;
}

std::uint32_t ChildIndex::hash(const FileNode* parent, std::string_view name) {
  std::uint64_t h = std::hash<std::string_view>{}(name);
  h ^= static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(parent)) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  const auto folded = static_cast<std::uint32_t>(h ^ (h >> 32));
  return folded <= kErased ? folded + 2 : folded;
}

FileNode* ChildIndex::find(const FileNode* parent, std::string_view name, std::uint32_t h) const {
  if (hashes_.empty()) return nullptr;
  const std::size_t mask = hashes_.size() - 1;
  for (std::size_t i = home(h);; i = (i + 1) & mask) {
    const std::uint32_t at = hashes_[i];
    if (at == kEmpty) return nullptr;
    if (at == h) {
      FileNode* found = node(ids_[i]);
      if (found->parent() == parent && found->name() == name) return found;
    }
  }
}

void ChildIndex::insert(const FileNode* node, std::uint32_t h) {
  if (too_full(used_ + 1)) rehash(used_ + 1);
  const std::size_t mask = hashes_.size() - 1;
  std::size_t i = home(h);
  while (hashes_[i] != kEmpty) i = (i + 1) & mask;
  hashes_[i] = h;
  ids_[i] = id(node);
  ++used_;
}

void ChildIndex::erase(const FileNode* node, std::uint32_t h) {
  const std::size_t mask = hashes_.size() - 1;
  const std::uint32_t wanted = id(node);
  for (std::size_t i = home(h); hashes_[i] != kEmpty; i = (i + 1) & mask)
    if (hashes_[i] == h && ids_[i] == wanted) {
      hashes_[i] = kErased;  // probes for other keys still pass through
      ++erased_;
      return;
    }
}

void ChildIndex::reserve(std::size_t nodes) {
  if (too_full(used_ + nodes)) rehash(used_ + nodes);
}

// Rehashes into a table with room for `want` nodes. Tombstones are
// dropped, and so are the nodes under a removed one: nothing looks below a
// hidden node. Until something is erased, no node is hidden.
void ChildIndex::rehash(std::size_t want) {
  std::size_t size = 1024;
  unsigned bits = 10;
  while (want > size / 8 * 7) size *= 2, ++bits;
  // A home is worked out from the 32 bits kept.
  if (bits > 32) throw std::length_error("merged tree: more paths than the index can hold");
  std::pmr::vector<std::uint32_t> old_hashes(size, kEmpty, bulk_memory());
  std::pmr::vector<std::uint32_t> old_ids(size, 0, bulk_memory());
  old_hashes.swap(hashes_);
  old_ids.swap(ids_);
  shift_ = 32 - bits;
  used_ = 0;
  const std::size_t mask = size - 1;
  for (std::size_t k = 0; k < old_hashes.size(); ++k) {
    const std::uint32_t h = old_hashes[k];
    if (h <= kErased || (erased_ != 0 && node(old_ids[k])->hidden)) continue;
    std::size_t i = home(h);
    while (hashes_[i] != kEmpty) i = (i + 1) & mask;
    hashes_[i] = h;
    ids_[i] = old_ids[k];
    ++used_;
  }
  erased_ = 0;
}

namespace {

// Address space for the nodes: offsets between them must fit 32 bits in
// 4-byte units. About 250 million paths of usual length.
constexpr std::size_t kNodeSpace = (std::size_t{8} << 30) - 4096;
// And for the inodes: 12 bytes each, 250 million.
constexpr std::size_t kInodeSpace = std::size_t{3} << 30;

// A node, its name's length and its name, in one piece of `region`.
FileNode& place_node(GrowingRegion& region, std::string_view name) {
  unsigned char length[10];
  std::size_t length_bytes = 0;
  for (std::size_t size = name.size();; size >>= 7) {
    length[length_bytes++] = static_cast<unsigned char>((size & 0x7F) | (size >= 0x80 ? 0x80 : 0));
    if (size < 0x80) break;
  }
  void* at = region.extend(sizeof(FileNode) + length_bytes + name.size(), alignof(FileNode));
  if (at == nullptr)
    throw InputError("the image's paths outgrow the " + std::to_string(region.capacity() >> 20) +
                     " MiB of address space the analysis could reserve for them");
  FileNode& node = *new (at) FileNode();
  auto* text = reinterpret_cast<unsigned char*>(&node + 1);
  std::memcpy(text, length, length_bytes);
  // The root's name is an empty view, whose null data memcpy must not get.
  if (!name.empty()) std::memcpy(text + length_bytes, name.data(), name.size());
  return node;
}

}  // namespace

MergedTree::MergedTree()
    : node_region_(kNodeSpace),
      inode_region_(kInodeSpace),
      index_(node_region_.base()),
      root_(&place_node(node_region_, {})) {}

FileNode* MergedTree::new_node(std::string_view name, EntryType type, std::uint32_t layer,
                               FileNode* parent, std::uint32_t hash) {
  FileNode& node = place_node(node_region_, name);
  node.type = type;
  node.layer = static_cast<std::uint16_t>(layer);
  node.link_ = type == EntryType::Dir ? 0 : -1;
  node.parent_ = node.offset_to(parent);
  // Into the ring after the last child, as the new last.
  if (FileNode* last = parent->link_ != 0 ? parent->at(parent->link_) : nullptr; last != nullptr) {
    node.next_ = node.offset_to(last->at(last->next_));
    last->next_ = last->offset_to(&node);
  }
  parent->link_ = parent->offset_to(&node);
  ++nodes_;
  index_.insert(&node, hash);
  return &node;
}

std::int32_t MergedTree::new_inode(std::uint64_t size, std::uint32_t layer) {
  if (size > kMaxFileSize)
    throw InputError("a file of " + std::to_string(size) +
                     " bytes: more than the analysis can count");
  void* at = inode_region_.extend(sizeof(Inode), alignof(Inode));
  if (at == nullptr)
    throw InputError("more than " + std::to_string(inode_count_) + " files: too many to analyse");
  auto* inode = new (at) Inode{};
  inode->size = size;
  inode->layer = static_cast<std::uint16_t>(layer);
  inode->names = 1;
  return static_cast<std::int32_t>(inode_count_++);
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
void MergedTree::release(FileNode& node, std::uint32_t layer, HiddenBy how, const std::string& at) {
  for (const FileNode* c : node.children()) release(*const_cast<FileNode*>(c), layer, how, at);
  node.hidden = true;
  --nodes_;
  if (node.inode() < 0) return;
  Inode& content = inode(node.inode());
  if (--content.names == 0 && content.size > 0) record_waste(at, how, content, layer);
}

void MergedTree::remove_child(FileNode& parent, FileNode& child, std::uint32_t layer, HiddenBy how,
                              const std::string& at) {
  cached_dir_ = nullptr;
  index_.erase(&child, ChildIndex::hash(&parent, child.name()));
  // It stays in the parent's ring, hidden (see FileNode).
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
    const std::uint32_t h = ChildIndex::hash(node, part);
    FileNode* next = index_.find(node, part, h);
    if (next != nullptr && next->type != EntryType::Dir) {
      remove_child(*node, *next, layer, HiddenBy::Replaced, rooted(full.substr(0, end)));
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
  const std::uint32_t h = ChildIndex::hash(parent, name);
  if (FileNode* found = index_.find(parent, name, h); found != nullptr) {
    FileNode& existing = *found;
    if (existing.type == EntryType::Dir && entry.type == EntryType::Dir) {
      existing.layer = static_cast<std::uint16_t>(layer);  // directory over directory merges
      return;
    }
    const bool same_kind = (existing.type == EntryType::Dir) == (entry.type == EntryType::Dir);
    const bool same_size_file = existing.type == EntryType::File && entry.type == EntryType::File &&
                                file_size(existing) == entry.size && entry.size > 0;
    remove_child(*parent, existing, layer,
                 !same_kind       ? HiddenBy::Replaced
                 : same_size_file ? HiddenBy::Readded
                                  : HiddenBy::Overwritten,
                 rooted(entry.path));
  }
  if (entry.type == EntryType::Hardlink) {
    // A hard link's bytes belong to its target: count them once.
    const FileNode* target = lookup(entry.link);
    FileNode* node = new_node(name, entry.type, layer, parent, h);
    if (target != nullptr && target->inode() >= 0) {
      node->link_ = target->inode();
      ++inode(target->inode()).names;
    } else {
      warnings_.push_back("layer " + std::to_string(layer) + ": hard link /" +
                          std::string(entry.path) + " points at /" + std::string(entry.link) +
                          ", which is not a file here");
    }
    return;
  }
  FileNode* node = new_node(name, entry.type, layer, parent, h);
  if (entry.type == EntryType::File) node->link_ = new_inode(entry.size, layer);
}

void MergedTree::apply(const LayerScan& layer, std::uint32_t index) {
  if (index >= kMaxLayers)
    throw InputError("more than " + std::to_string(kMaxLayers) + " layers: too many to stack");
  index_.reserve(layer.entries.size());
  // Opaque markers hide the lower children of their directory, wherever they
  // sit in the tar, and only lower ones: so they go first.
  for (const auto& e : layer.entries) {
    const auto [dir, name] = split_path(e.path);
    if (name != kOpaqueMarker) continue;
    FileNode* d = lookup(dir);
    if (d == nullptr || d->type != EntryType::Dir) continue;
    const std::string at = rooted(dir);
    // Removing hides a child without unlinking it: the walk goes on past it.
    for (const FileNode* c : d->children())
      remove_child(*d, *const_cast<FileNode*>(c), index, HiddenBy::Opaque, at);
  }
  // Whiteouts, too, hide lower layers only; a file the same layer adds under
  // the same name survives.
  for (const auto& e : layer.entries) {
    const auto [dir, name] = split_path(e.path);
    if (!name.starts_with(kWhiteoutPrefix) || name.starts_with(kWhiteoutMetaPrefix)) continue;
    FileNode* d = lookup(dir);
    if (d == nullptr || d->type != EntryType::Dir) continue;
    const std::string target(name.substr(kWhiteoutPrefix.size()));
    const std::string at = rooted(dir, target);
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
  for (const auto& content : inodes())
    if (content.names > 0) total += content.size;
  return total;
}

}  // namespace imgsmith
