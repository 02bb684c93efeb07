#include "imgsmith/analysis/dive_metrics.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <queue>

#include "imgsmith/analysis/merged_tree.hpp"
#include "imgsmith/util/bulk_memory.hpp"
#include "imgsmith/util/byte_list.hpp"

namespace imgsmith {
namespace {

std::uint64_t subtree_bytes(const MergedTree& tree, const FileNode& node) {
  std::uint64_t total = tree.file_size(node);
  for (const FileNode* child : node.children()) total += subtree_bytes(tree, *child);
  return total;
}

// How many bytes `a` and `b` share at their start, compared a word at a
// time: sorted paths share most of theirs, and every list here is sorted.
std::size_t common_prefix(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= n; i += 8) {
      std::uint64_t x = 0, y = 0;
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
      if (x != y) return i + static_cast<std::size_t>(std::countr_zero(x ^ y) / 8);
    }
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Byte order with '/' before every other byte: a path's descendants then
// sort directly after it ("a/b", "a/b/c", "a/b-c"), which is also the order
// a directory walk writes a tar in, so most layers arrive sorted. `shared`
// is common_prefix(a, b).
bool path_before(std::string_view a, std::string_view b, std::size_t shared) {
  if (shared == a.size() || shared == b.size()) return a.size() < b.size();
  const auto x = static_cast<unsigned char>(a[shared]), y = static_cast<unsigned char>(b[shared]);
  if (x == '/') return true;
  if (y == '/') return false;
  return x < y;
}

bool path_before(std::string_view a, std::string_view b) {
  return path_before(a, b, common_prefix(a, b));
}

// Room for the numbers of one list item: three varints of at most 10 bytes.
constexpr std::size_t kItemHead = 32;

char* put_varint(char* at, std::uint64_t v) {
  while (v >= 0x80) {
    *at++ = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  *at++ = static_cast<char>(v);
  return at;
}

// A list of paths, each as the length it shares with the one before and the
// rest, followed by `tail`'s bytes (whatever the list's user keeps with it).
class FrontCodedWriter {
 public:
  void add(std::string_view path, std::string_view tail) {
    add(path, tail, common_prefix(path, previous_));
  }
  // `shared` is common_prefix(path, previous()).
  void add(std::string_view path, std::string_view tail, std::size_t shared) {
    const std::string_view rest = path.substr(shared);
    // Most items are a few bytes: put together first, appended in one go.
    char item[128];
    char* end = put_varint(put_varint(item, shared), rest.size());
    if (static_cast<std::size_t>(end - item) + rest.size() + tail.size() <= sizeof item) {
      std::memcpy(end, rest.data(), rest.size());
      std::memcpy(end + rest.size(), tail.data(), tail.size());
      out_.append(item, static_cast<std::size_t>(end - item) + rest.size() + tail.size());
    } else {
      out_.append(item, static_cast<std::size_t>(end - item));
      out_.append(rest);
      out_.append(tail);
    }
    previous_.resize(shared);
    previous_.append(rest);
  }
  // The last path added.
  const std::string& previous() const { return previous_; }
  ByteList done() { return std::move(out_); }

 private:
  ByteList out_;
  std::string previous_;
};

// A layer's leaves written in key order, front-coded, each with its size.
class LeafWriter {
 public:
  void add(std::string_view key, std::uint64_t size) {
    char tail[kItemHead];
    list_.add(key, std::string_view(tail, static_cast<std::size_t>(put_varint(tail, size) - tail)));
  }
  ByteList done() { return list_.done(); }

 private:
  FrontCodedWriter list_;
};

// Reads a FrontCodedWriter's list back: each path whole, then its tail
// through tail(), which the list's user reads as it wrote it.
class FrontCodedReader {
 public:
  explicit FrontCodedReader(const ByteList& list) : read_(list) {}
  // The next path into path(); false at the end.
  bool next() {
    if (read_.at_end()) return false;
    const auto shared = static_cast<std::size_t>(read_.varint());
    const auto rest = static_cast<std::size_t>(read_.varint());
    path_.resize(shared);
    read_.read(rest, path_);
    return true;
  }
  const std::string& path() const { return path_; }
  ByteList::Reader& tail() { return read_; }

 private:
  ByteList::Reader read_;
  std::string path_;
};

// Reads a LeafWriter's list back, one leaf at a time.
class LeafReader {
 public:
  explicit LeafReader(const ByteList& list) : list_(list) {}
  // The next leaf into key() and size(); false at the end.
  bool next() {
    if (!list_.next()) return false;
    size_ = list_.tail().varint();
    return true;
  }
  const std::string& key() const { return list_.path(); }
  std::uint64_t size() const { return size_; }

 private:
  FrontCodedReader list_;
  std::uint64_t size_ = 0;
};

bool refused(std::string_view path) {
  return split_path(path).second.starts_with(kWhiteoutMetaPrefix);
}

// dive's layer tree: the entries it can add (it refuses .wh..wh.* names),
// the last one winning when a path repeats, and every parent implied; its
// leaves, front-coded in key order. The entries dive does not refuse come
// one at a time in path order, where repeats are neighbours and a path's
// first descendant, if any, is the next different path: so each entry is
// a leaf unless the next one is the same path or one below it. A whiteout
// counts, at the path it deletes, that directory's bytes in `below`
// (nullptr: nothing is below), or 0.
class LeafBuilder {
 public:
  explicit LeafBuilder(const MergedTree* below) : below_(below) {}

  void add(std::string_view path, EntryType type, std::uint64_t size) {
    add(path, type, size, common_prefix(path, pending_path_));
  }
  // `shared` is common_prefix(path, the path added last).
  void add(std::string_view path, EntryType type, std::uint64_t size, std::size_t shared) {
    if (pending_) {
      const bool same = shared == path.size() && shared == pending_path_.size();
      const bool below =
          shared == pending_path_.size() && path.size() > shared && path[shared] == '/';
      if (!same && !below) emit();
    }
    pending_path_.resize(shared);
    pending_path_.append(path.substr(shared));
    pending_type_ = type;
    pending_size_ = size;
    pending_ = true;
  }

  // The path added last ("" before any).
  const std::string& last_path() const { return pending_path_; }

  // Gives back what was added, as entries that build the same leaves, and
  // is left empty: each leaf as a file of its size, each whiteout as the
  // whiteout it came from. Only for a builder with nothing below.
  template <typename Entry>
  void drain(Entry&& entry) {
    if (pending_) emit();
    pending_ = false;
    pending_path_.clear();
    const ByteList list = leaves_.done();
    leaves_ = LeafWriter();
    LeafReader read(list);
    while (read.next()) entry(read.key(), EntryType::File, read.size());
    std::string original;
    for (const auto& [target, size] : whiteouts_) {
      const auto [dir, name] = split_path(target);
      original.assign(dir);
      if (!dir.empty()) original.push_back('/');
      original.append(kWhiteoutPrefix).append(name);
      entry(original, EntryType::Other, size);
    }
    whiteouts_.clear();
  }

  ByteList done() {
    if (pending_) emit();
    pending_ = false;
    if (whiteouts_.empty()) return leaves_.done();
    // A whiteout's key is not its own path, so whiteouts came out of order:
    // they are few, and merged in once sorted.
    std::stable_sort(whiteouts_.begin(), whiteouts_.end(),
                     [](const auto& a, const auto& b) { return path_before(a.first, b.first); });
    const ByteList list = leaves_.done();
    LeafReader read(list);
    LeafWriter merged;
    bool unread = read.next();
    std::size_t w = 0;
    while (unread || w < whiteouts_.size()) {
      if (w < whiteouts_.size() && (!unread || !path_before(read.key(), whiteouts_[w].first))) {
        merged.add(whiteouts_[w].first, whiteouts_[w].second);
        ++w;
      } else {
        merged.add(read.key(), read.size());
        unread = read.next();
      }
    }
    return merged.done();
  }

 private:
  void emit() {
    const auto [dir, name] = split_path(pending_path_);
    if (!name.starts_with(kWhiteoutPrefix)) {
      leaves_.add(pending_path_, pending_type_ == EntryType::File ? pending_size_ : 0);
      return;
    }
    std::string target(dir);
    if (!target.empty()) target.push_back('/');
    target += name.substr(kWhiteoutPrefix.size());
    const FileNode* gone = below_ != nullptr ? below_->find(target) : nullptr;
    const std::uint64_t size =
        gone != nullptr && gone->type == EntryType::Dir ? subtree_bytes(*below_, *gone) : 0;
    whiteouts_.emplace_back(std::move(target), size);
  }

  const MergedTree* below_;
  LeafWriter leaves_;
  std::vector<std::pair<std::string, std::uint64_t>> whiteouts_;
  bool pending_ = false;  // an entry whose successor is not known yet
  std::string pending_path_;
  EntryType pending_type_ = EntryType::Other;
  std::uint64_t pending_size_ = 0;
};

// Reads a FirstLayerRecord's list back, one entry at a time.
class RecordReader {
 public:
  explicit RecordReader(const ByteList& list) : list_(list) {}
  bool next() {
    if (!list_.next()) return false;
    type_ = static_cast<EntryType>(list_.tail().byte());
    size_ = list_.tail().varint();
    return true;
  }
  const std::string& path() const { return list_.path(); }
  EntryType type() const { return type_; }
  std::uint64_t size() const { return size_; }

 private:
  FrontCodedReader list_;
  EntryType type_ = EntryType::Other;
  std::uint64_t size_ = 0;
};

}  // namespace

// While the entries come in path order (as a directory walk writes them),
// only dive's leaves, worked out as they come. From the first entry out of
// order on, a list of entries, front-coded in tar order, each with its type
// and size, to be sorted at the end: it starts with the leaves so far, which
// stand for the entries before (an entry that is not a leaf has a
// descendant among them, which keeps it from being one whatever comes later).
struct FirstLayerRecord::State {
  std::optional<LeafBuilder> leaves{std::in_place, nullptr};
  FrontCodedWriter list;
  std::uint64_t count = 0;  // entries in the list

  void record(std::string_view path, EntryType type, std::uint64_t size) {
    char tail[kItemHead];
    tail[0] = static_cast<char>(type);
    list.add(path,
             std::string_view(tail, static_cast<std::size_t>(put_varint(tail + 1, size) - tail)));
    ++count;
  }
};

FirstLayerRecord::FirstLayerRecord() : state_(std::make_unique<State>()) {}
FirstLayerRecord::~FirstLayerRecord() = default;

void FirstLayerRecord::add(std::span<const TarEntry> entries) {
  State& st = *state_;
  for (const TarEntry& e : entries) {
    if (refused(e.path)) continue;
    if (st.leaves) {
      const std::string& previous = st.leaves->last_path();
      const std::size_t shared = common_prefix(e.path, previous);
      if (previous.empty() || !path_before(e.path, previous, shared)) {
        st.leaves->add(e.path, e.type, e.size, shared);
        continue;
      }
      st.leaves->drain([&](std::string_view path, EntryType type, std::uint64_t size) {
        st.record(path, type, size);
      });
      st.leaves.reset();
    }
    st.record(e.path, e.type, e.size);
  }
}

void DiveEfficiency::add_layer(const LayerScan& layer, const MergedTree& below) {
  layer_bytes_.push_back(layer.content_bytes);
  const auto& entries = layer.entries;
  LeafBuilder leaves(&below);
  // Most layers come in path order already and are read as they are; the
  // others through an index sorted stably, so that of equal paths the last
  // in the tar still comes last.
  bool in_order = true;
  std::string_view previous;
  bool any = false;
  for (std::size_t i = 0; i < entries.size() && in_order; ++i) {
    if (refused(entries[i].path)) continue;
    if (any && path_before(entries[i].path, previous)) in_order = false;
    previous = entries[i].path;
    any = true;
  }
  if (in_order) {
    for (const TarEntry& e : entries)
      if (!refused(e.path)) leaves.add(e.path, e.type, e.size);
  } else {
    std::pmr::vector<std::uint32_t> order(bulk_memory());
    order.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (!refused(entries[i].path)) order.push_back(static_cast<std::uint32_t>(i));
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return path_before(entries[a].path, entries[b].path);
    });
    for (const std::uint32_t i : order)
      leaves.add(entries[i].path, entries[i].type, entries[i].size);
  }
  leaves_.push_back(leaves.done());
}

void DiveEfficiency::add_first_layer(FirstLayerRecord& record, std::uint64_t content_bytes) {
  layer_bytes_.push_back(content_bytes);
  FirstLayerRecord::State& st = *record.state_;
  if (st.leaves) {
    leaves_.push_back(st.leaves->done());
    st = FirstLayerRecord::State();
    return;
  }
  // Out of path order: all of them at once, sorted stably (of equal paths
  // the last in the tar still comes last).
  struct Entry {
    std::string path;
    EntryType type;
    std::uint64_t size;
  };
  std::vector<Entry> all;
  all.reserve(st.count);
  {
    const ByteList list = st.list.done();
    st = FirstLayerRecord::State();
    RecordReader read(list);
    while (read.next()) all.push_back(Entry{read.path(), read.type(), read.size()});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Entry& a, const Entry& b) { return path_before(a.path, b.path); });
  LeafBuilder leaves(nullptr);
  for (const Entry& e : all) leaves.add(e.path, e.type, e.size);
  leaves_.push_back(leaves.done());
}

DiveFigures DiveEfficiency::finish(std::size_t top) const {
  DiveFigures out;
  std::uint64_t minimum_sum = 0, cumulative_sum = 0;

  // Listed first: more bytes, then the path in byte order.
  const auto listed_before = [](const InefficientPath& a, const InefficientPath& b) {
    return a.cumulative_bytes != b.cumulative_bytes ? a.cumulative_bytes > b.cumulative_bytes
                                                    : a.path < b.path;
  };
  // Merges the layers' sorted lists; each run of one key is one path of
  // dive's merged tree, with a copy per layer (or per repeat) that has it.
  std::vector<LeafReader> readers;
  readers.reserve(leaves_.size());
  for (const auto& list : leaves_) readers.emplace_back(list);
  const auto later = [&](std::size_t a, std::size_t b) {
    return path_before(readers[b].key(), readers[a].key());
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> heap(later);
  for (std::size_t l = 0; l < readers.size(); ++l)
    if (readers[l].next()) heap.push(l);
  std::string key;
  while (!heap.empty()) {
    key = readers[heap.top()].key();
    std::uint64_t minimum = 0, cumulative = 0;
    std::uint32_t copies = 0;
    while (!heap.empty()) {
      const std::size_t l = heap.top();
      if (readers[l].key() != key) break;
      heap.pop();
      const std::uint64_t size = readers[l].size();
      minimum = copies == 0 ? size : std::min(minimum, size);
      cumulative += size;
      copies += 1;
      if (readers[l].next()) heap.push(l);
    }
    minimum_sum += minimum;
    cumulative_sum += cumulative;
    if (copies >= 2) {
      out.wasted_bytes += cumulative;
      out.inefficient_total += 1;
      // Only the `top` largest are kept: a heap whose front is the last of them.
      if (top == 0) continue;
      auto& kept = out.inefficient;
      if (kept.size() == top) {
        const InefficientPath& last = kept.front();
        const bool before_last = cumulative != last.cumulative_bytes
                                     ? cumulative > last.cumulative_bytes
                                     : std::string_view(last.path).substr(1).compare(key) > 0;
        if (!before_last) continue;
        std::pop_heap(kept.begin(), kept.end(), listed_before);
        kept.pop_back();
      }
      kept.push_back(InefficientPath{"/" + key, cumulative, copies});
      std::push_heap(kept.begin(), kept.end(), listed_before);
    }
  }
  out.efficiency = cumulative_sum == 0
                       ? 1.0
                       : static_cast<double>(minimum_sum) / static_cast<double>(cumulative_sum);
  for (std::size_t i = 0; i < layer_bytes_.size(); ++i) {
    out.size_bytes += layer_bytes_[i];
    if (i > 0) out.user_size_bytes += layer_bytes_[i];
  }
  out.user_wasted_percent = out.user_size_bytes == 0 ? 0.0
                                                     : static_cast<double>(out.wasted_bytes) /
                                                           static_cast<double>(out.user_size_bytes);
  std::sort_heap(out.inefficient.begin(), out.inefficient.end(), listed_before);
  return out;
}

}  // namespace imgsmith
