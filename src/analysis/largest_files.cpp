// The largest files of the final image, each content once.
#include <algorithm>

#include "analyze_internal.hpp"

namespace imgsmith {

// Lists each content once, under the name its regular-file entry gave it
// when that name is still visible (the busybox binary, not one of its links).
void collect_largest(const FileNode& node, std::span<const MergedTree::Inode> inodes,
                     EntryType pass, std::vector<bool>& seen, std::vector<FileReport>& heap,
                     std::size_t top) {
  // Largest first, equal sizes by path: which files make the list must not
  // depend on the order the tree happens to be walked in.
  const auto before = [](const FileReport& a, const FileReport& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.path < b.path;
  };
  if (top == 0) return;
  for (const FileNode* child : node.children()) {
    const auto id = static_cast<std::size_t>(child->inode());
    if (child->inode() >= 0 && child->type == pass && !seen[id]) {
      seen[id] = true;
      const auto& inode = inodes[id];
      if (heap.size() < top || inode.size >= heap.front().bytes) {
        FileReport file{child->path(), inode.size, inode.layer, inode.names - 1};
        if (heap.size() < top || before(file, heap.front())) {
          heap.push_back(std::move(file));
          std::push_heap(heap.begin(), heap.end(), before);  // the front is the last in the list
          if (heap.size() > top) {
            std::pop_heap(heap.begin(), heap.end(), before);
            heap.pop_back();
          }
        }
      }
    }
    collect_largest(*child, inodes, pass, seen, heap, top);
  }
}

}  // namespace imgsmith
