#include "imgsmith/merged_tree.hpp"

#include <tuple>

namespace imgsmith {

const char* hidden_by_name(HiddenBy how) {
  switch (how) {
    case HiddenBy::Deleted: return "deleted";
    case HiddenBy::Opaque: return "opaque";
    case HiddenBy::Overwritten: return "overwritten";
    case HiddenBy::Replaced: return "replaced";
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

MergedTree::MergedTree() : root_(&storage_.emplace_back(&arena_)) {}

FileNode* MergedTree::new_node(std::string_view name, EntryType type, std::uint32_t layer,
                               FileNode* parent) {
  FileNode& node = storage_.emplace_back(&arena_);
  node.name = name;
  node.type = type;
  node.layer = layer;
  node.parent = parent;
  ++nodes_;
  parent->children.emplace(node.name, &node);
  return &node;
}

const FileNode* MergedTree::find(std::string_view path) const {
  return const_cast<MergedTree*>(this)->lookup(path);
}

FileNode* MergedTree::lookup(std::string_view path) {
  FileNode* node = root_;
  while (!path.empty() && node != nullptr) {
    const auto slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    const auto it = node->children.find(part);
    node = it == node->children.end() ? nullptr : it->second;
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
  for (auto& [name, child] : node.children) release(*child, layer, how, at);
  --nodes_;
  if (node.inode < 0) return;
  Inode& inode = inodes_[static_cast<std::size_t>(node.inode)];
  if (--inode.names == 0 && inode.size > 0) record_waste(at, how, inode, layer);
}

void MergedTree::remove_child(FileNode& parent, std::string_view name, std::uint32_t layer,
                              HiddenBy how, const std::string& at) {
  const auto it = parent.children.find(name);
  if (it == parent.children.end()) return;
  cached_dir_ = nullptr;
  release(*it->second, layer, how, at);
  parent.children.erase(it);
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
    auto it = node->children.find(part);
    if (it != node->children.end() && it->second->type != EntryType::Dir) {
      remove_child(*node, part, layer, HiddenBy::Replaced,
                   "/" + std::string(full.substr(0, end)));
      it = node->children.end();
    }
    node = it != node->children.end() ? it->second : new_node(part, EntryType::Dir, layer, node);
    start = end + 1;
  }
  return node;
}

void MergedTree::add_entry(const TarEntry& entry, std::uint32_t layer) {
  const auto [dir, name] = split_path(entry.path);
  FileNode* parent = ensure_dir(dir, layer);
  if (auto it = parent->children.find(name); it != parent->children.end()) {
    FileNode& existing = *it->second;
    if (existing.type == EntryType::Dir && entry.type == EntryType::Dir) {
      existing.layer = layer;  // directory over directory merges
      return;
    }
    const bool same_kind = (existing.type == EntryType::Dir) == (entry.type == EntryType::Dir);
    remove_child(*parent, name, layer,
                 same_kind ? HiddenBy::Overwritten : HiddenBy::Replaced, "/" + entry.path);
  }
  if (entry.type == EntryType::Hardlink) {
    // A hard link's bytes belong to its target: count them once.
    const FileNode* target = lookup(entry.link);
    FileNode* node = new_node(name, entry.type, layer, parent);
    if (target != nullptr && target->inode >= 0) {
      node->inode = target->inode;
      ++inodes_[static_cast<std::size_t>(target->inode)].names;
    } else {
      warnings_.push_back("layer " + std::to_string(layer) + ": hard link /" + entry.path +
                          " points at /" + entry.link + ", which is not a file here");
    }
    return;
  }
  FileNode* node = new_node(name, entry.type, layer, parent);
  if (entry.type == EntryType::File) {
    node->size = entry.size;
    node->inode = static_cast<std::int64_t>(inodes_.size());
    inodes_.push_back(Inode{entry.size, layer, 1});
  }
}

void MergedTree::apply(const LayerScan& layer, std::uint32_t index) {
  // Opaque markers hide the lower children of their directory, wherever they
  // sit in the tar, and only lower ones: so they go first.
  for (const auto& e : layer.entries) {
    const auto [dir, name] = split_path(e.path);
    if (name != kOpaqueMarker) continue;
    FileNode* d = lookup(dir);
    if (d == nullptr || d->type != EntryType::Dir) continue;
    const std::string at = "/" + std::string(dir);
    while (!d->children.empty()) {
      remove_child(*d, d->children.begin()->first, index, HiddenBy::Opaque, at);
    }
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
    remove_child(*d, target, index, HiddenBy::Deleted, at);
  }
  for (const auto& e : layer.entries) {
    const auto name = split_path(e.path).second;
    if (name.starts_with(kWhiteoutPrefix)) continue;
    add_entry(e, index);
  }
}

std::uint64_t MergedTree::visible_bytes() const {
  std::uint64_t total = 0;
  for (const auto& inode : inodes_)
    if (inode.names > 0) total += inode.size;
  return total;
}

}  // namespace imgsmith
