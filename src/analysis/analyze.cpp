#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <span>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/analysis/merged_tree.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith {

std::string config_string(const nlohmann::json& config, const char* key) {
  const auto it = config.find(key);
  return it != config.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// created_by for each layer: history entries without empty_layer map one to
// one onto the layers, in order (docs/image-formats.md).
std::vector<std::string> created_by_per_layer(const nlohmann::json& config, std::size_t layers,
                                              std::vector<std::string>& warnings) {
  std::vector<std::string> out;
  const auto history = config.find("history");
  if (history == config.end() || !history->is_array()) return out;
  for (const auto& h : *history) {
    if (!h.is_object()) continue;
    const auto empty = h.find("empty_layer");
    if (empty != h.end() && empty->is_boolean() && empty->get<bool>()) continue;
    std::string text = config_string(h, "created_by");
    if (text.empty()) text = config_string(h, "comment");
    out.push_back(std::move(text));
  }
  if (out.size() != layers)
    warnings.push_back("the config history describes " + std::to_string(out.size()) +
                       " layers but the image has " + std::to_string(layers) +
                       "; created_by may not line up");
  return out;
}

// Same-size re-adds come file by file from the merge (a chmod -R of 250
// files is 250 of them); users think of them as one change to a directory.
// Per layer pair, they become one group at the deepest directory holding
// them all, or one per top-level directory when that would be the root.
namespace {

std::vector<WasteGroup> group_readded(std::vector<WasteGroup> waste) {
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::string>, WasteGroup> groups;
  std::vector<WasteGroup> out;
  const auto common_dir = [](std::string_view a, std::string_view b) {
    std::size_t n = 0, last_slash = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) {
      if (a[n] == '/') last_slash = n;
      ++n;
    }
    // A whole path that is a directory of the other counts in full.
    if ((n == a.size() && n < b.size() && b[n] == '/') ||
        (n == b.size() && n < a.size() && a[n] == '/'))
      last_slash = n;
    return std::string(a.substr(0, last_slash));
  };
  for (auto& w : waste) {
    if (w.how != HiddenBy::Readded) {
      out.push_back(std::move(w));
      continue;
    }
    const std::string_view path = w.path;
    const auto second = path.find('/', 1);
    const std::string top(path.substr(0, second));  // "/opt" of "/opt/s/d0/f"
    auto [it, inserted] = groups.try_emplace({w.added_layer, w.hidden_layer, top}, w);
    if (inserted) {
      // A lone file keeps its own path; the directory comes with a second one.
      continue;
    }
    WasteGroup& g = it->second;
    g.path = common_dir(g.path, w.path);
    if (g.path.empty()) g.path = top;
    g.bytes += w.bytes;
    g.files += w.files;
  }
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

// How many layers the base image (the first FROM) has, from the history:
// a base image's history ends with its CMD or ENTRYPOINT (ubuntu, debian,
// python, nvidia/cuda all do), so the layers before the last CMD or
// ENTRYPOINT that more layers follow are the base's. 0 when the history
// says nothing (FROM scratch, no history).
std::size_t base_layers_from_history(const nlohmann::json& config) {
  const auto history = config.find("history");
  if (history == config.end() || !history->is_array()) return 0;
  std::size_t layers = 0, base = 0;
  bool pending = false;  // a CMD/ENTRYPOINT seen, no layer after it yet
  std::size_t candidate = 0;
  for (const auto& h : *history) {
    if (!h.is_object()) continue;
    const auto empty = h.find("empty_layer");
    const bool is_empty = empty != h.end() && empty->is_boolean() && empty->get<bool>();
    const std::string step = dockerfile_step(config_string(h, "created_by"));
    if (is_empty && (step.starts_with("CMD ") || step.starts_with("ENTRYPOINT "))) {
      pending = true;
      candidate = layers;
    }
    if (!is_empty) {
      ++layers;
      if (pending) base = candidate;
      pending = false;
    }
  }
  return base;
}

// The first layer's entries, handed over by the thread that scans it and
// merged on the analysing thread meanwhile: on two cores the merge then
// costs little more than the scan (MergedTree::add_first_layer says why
// the first layer can be merged in pieces). Each batch is copied, its paths
// included, and recorded for dive's figures as it is merged, so the feed
// can take the entries (EntrySink::takes_entries): the first layer, often
// most of the image, is then never held whole. A few batches wait at most:
// a merge that falls behind holds the scan back instead of piling up
// entries.
class FirstLayerFeed {
 public:
  FirstLayerFeed(MergedTree& tree, FirstLayerRecord& record, bool take)
      : tree_(tree), record_(record), take_(take) {}

  EntrySink sink() {
    return EntrySink([this](std::span<const TarEntry> batch) { queue(batch); }, take_);
  }
  // The scan has ended, well or not.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_one();
  }
  // Merges batches as they come, until close().
  void merge_until_closed() {
    try {
      for (;;) {
        Batch batch;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          ready_.wait(lock, [&] { return !pending_.empty() || closed_; });
          if (pending_.empty()) return;
          batch = std::move(pending_.front());
          pending_.pop_front();
          queued_ -= batch.entries.size();
        }
        room_.notify_one();
        tree_.add_first_layer(batch.entries);
        record_.add(batch.entries);
        merged_ += batch.entries.size();
      }
    } catch (...) {
      // The scan must not wait for room that never comes.
      {
        std::lock_guard<std::mutex> lock(mutex_);
        abandoned_ = true;
      }
      room_.notify_all();
      throw;
    }
  }
  std::size_t merged() const { return merged_; }

 private:
  struct Batch {
    std::vector<TarEntry> entries;
    // What the entries' paths and links view: a buffer that stays put when
    // the batch moves (a short std::string would not).
    std::unique_ptr<char[]> text;
  };
  // Entries waiting at most, in batches of the scan's size.
  static constexpr std::size_t kMaxQueued = 16 * 4096;

  void queue(std::span<const TarEntry> entries) {
    Batch batch;
    std::size_t bytes = 0;
    for (const TarEntry& e : entries) bytes += e.path.size() + e.link.size();
    batch.text = std::make_unique_for_overwrite<char[]>(bytes);
    batch.entries.assign(entries.begin(), entries.end());
    char* at = batch.text.get();
    const auto keep = [&](std::string_view& view) {
      if (view.empty()) return;
      std::memcpy(at, view.data(), view.size());
      view = std::string_view(at, view.size());
      at += view.size();
    };
    for (TarEntry& e : batch.entries) {
      keep(e.path);
      keep(e.link);
    }
    {
      std::unique_lock<std::mutex> lock(mutex_);
      room_.wait(lock, [&] { return queued_ < kMaxQueued || abandoned_; });
      if (abandoned_) return;
      queued_ += batch.entries.size();
      pending_.push_back(std::move(batch));
    }
    ready_.notify_one();
  }

  MergedTree& tree_;
  FirstLayerRecord& record_;
  const bool take_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<Batch> pending_;
  std::size_t queued_ = 0;
  bool closed_ = false;
  bool abandoned_ = false;
  std::size_t merged_ = 0;
};

// Scans distinct blobs, several at a time when the store can seek; the
// first error (in blob order) is rethrown once all have stopped. With a
// feed, the scans run on other threads and this one merges the first blob.
std::vector<std::shared_ptr<const LayerScan>> scan_blobs(const BlobStore& store,
                                                         const std::vector<std::string>& blobs,
                                                         const std::vector<CaptureFn>& hash,
                                                         const AnalyzeOptions& options,
                                                         const char* what,
                                                         FirstLayerFeed* feed = nullptr) {
  std::vector<std::shared_ptr<const LayerScan>> results(blobs.size());
  std::vector<std::exception_ptr> errors(blobs.size());
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex progress_lock;
  auto worker = [&] {
    for (std::size_t i = next++; i < blobs.size(); i = next++) {
      try {
        results[i] = store.scan_layer(blobs[i], hash.empty() ? CaptureFn{} : hash[i],
                                      i == 0 && feed != nullptr ? feed->sink() : EntrySink{});
      } catch (...) {
        errors[i] = std::current_exception();
      }
      if (i == 0 && feed != nullptr) feed->close();
      const std::size_t finished = ++done;
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_lock);
        options.progress(std::string(what) + " " + std::to_string(finished) + "/" +
                         std::to_string(blobs.size()));
      }
    }
  };
  unsigned threads = options.threads != 0                 ? options.threads
                     : store.preferred_parallelism() != 0 ? store.preferred_parallelism()
                                                          : std::thread::hardware_concurrency();
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(blobs.size())));
  if (!store.parallel_scans()) threads = 1;
  if (feed != nullptr) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    std::exception_ptr merge_error;
    try {
      feed->merge_until_closed();
    } catch (...) {
      merge_error = std::current_exception();  // the scans still have to stop first
    }
    for (auto& t : pool) t.join();
    if (merge_error) std::rethrow_exception(merge_error);
  } else if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

// Scans each distinct blob once (a save may list one digest twice). Where
// the store reads local files, the first layer is merged into `started` as
// it is read.
std::vector<std::shared_ptr<const LayerScan>> scan_all(const BlobStore& store,
                                                       const ResolvedImage& image,
                                                       const AnalyzeOptions& options,
                                                       PartialMerge& started) {
  std::vector<std::string> unique;
  std::map<std::string, std::size_t> slot;
  for (const auto& l : image.layers)
    if (slot.emplace(l.blob, unique.size()).second) unique.push_back(l.blob);
  std::optional<FirstLayerFeed> feed;
  if (store.parallel_scans() && !unique.empty()) {
    started.tree = std::make_shared<MergedTree>();
    started.first_layer = std::make_shared<FirstLayerRecord>();
    // The scan need not keep what the feed takes, unless the entries are
    // read again: for another layer with the same blob, or for the hard
    // links of --hash.
    const bool blob_listed_once =
        std::count_if(image.layers.begin(), image.layers.end(),
                      [&](const LayerRef& l) { return l.blob == unique.front(); }) == 1;
    feed.emplace(*started.tree, *started.first_layer, blob_listed_once && !options.hash_duplicates);
  }
  const auto results =
      scan_blobs(store, unique, {}, options, "read layer", feed ? &*feed : nullptr);
  if (feed) started.first_layer_entries = feed->merged();
  std::vector<std::shared_ptr<const LayerScan>> per_layer;
  for (const auto& l : image.layers) per_layer.push_back(results[slot.at(l.blob)]);
  return per_layer;
}

// Identical content at different paths. Only files whose size another
// visible file shares are digested: a second, targeted pass over the layers
// that hold them where the store can seek, else the digests of the one pass.
std::vector<DuplicateGroup> find_duplicates(
    const BlobStore& store, const ResolvedImage& image,
    const std::vector<std::shared_ptr<const LayerScan>>& scans, const MergedTree& tree,
    const AnalyzeOptions& options) {
  // Each visible content under the regular-file name that created it.
  std::vector<std::string> path_of(tree.inodes().size());
  // Content only a hard link still shows: a later layer replaced its file
  // name (an `ln` in a later RUN copies the file up, leaving the old link on
  // the old content), so its bytes are under the link's target in its layer.
  std::vector<const FileNode*> shown_by_link(tree.inodes().size(), nullptr);
  std::vector<const FileNode*> stack{&tree.root()};
  while (!stack.empty()) {
    const FileNode* node = stack.back();
    stack.pop_back();
    for (const FileNode* child : node->children()) {
      if (child->type == EntryType::File && child->inode() >= 0)
        path_of[static_cast<std::size_t>(child->inode())] = child->path().substr(1);
      if (child->type == EntryType::Hardlink && child->inode() >= 0 &&
          shown_by_link[static_cast<std::size_t>(child->inode())] == nullptr)
        shown_by_link[static_cast<std::size_t>(child->inode())] = child;
      stack.push_back(child);
    }
  }
  // The name a report shows: path_of, or the link's own name where the
  // bytes are read under its target's.
  std::vector<std::string> shown_as(tree.inodes().size());
  std::map<std::uint32_t, std::unordered_map<std::string_view, std::string_view>> link_targets;
  for (std::size_t i = 0; i < path_of.size(); ++i) {
    const FileNode* link = shown_by_link[i];
    if (!path_of[i].empty() || link == nullptr || link->layer >= scans.size()) continue;
    auto [targets, fresh] = link_targets.try_emplace(link->layer);
    if (fresh)
      for (const TarEntry& e : scans[link->layer]->entries)
        if (e.type == EntryType::Hardlink) targets->second.emplace(e.path, e.link);
    const std::string path = link->path().substr(1);
    if (const auto t = targets->second.find(path); t != targets->second.end()) {
      path_of[i] = std::string(t->second);
      shown_as[i] = path;
    }
  }
  std::map<std::uint64_t, std::vector<std::size_t>> by_size;
  for (std::size_t i = 0; i < tree.inodes().size(); ++i)
    if (tree.inodes()[i].names > 0 && tree.inodes()[i].size > 0 && !path_of[i].empty())
      by_size[tree.inodes()[i].size].push_back(i);
  std::erase_if(by_size, [](const auto& entry) { return entry.second.size() < 2; });
  if (by_size.empty()) return {};

  // Which paths to digest in which layer.
  std::map<std::uint32_t, std::set<std::string>> wanted;
  for (const auto& [size, ids] : by_size)
    for (const std::size_t id : ids) wanted[tree.inodes()[id].layer].insert(path_of[id]);

  std::map<std::pair<std::uint32_t, std::string>, std::string> digest_of;
  const auto record = [&](std::uint32_t layer, const LayerScan& scan) {
    for (const auto& [path, digest] : scan.digests) digest_of[{layer, path}] = digest;  // last wins
  };
  if (store.parallel_scans()) {
    std::vector<std::string> blobs;
    std::vector<std::uint32_t> layers;
    std::vector<CaptureFn> hash;
    for (const auto& entry : wanted) {
      blobs.push_back(image.layers[entry.first].blob);
      layers.push_back(entry.first);
      hash.push_back([&paths = entry.second](std::string_view p, std::uint64_t) {
        return paths.count(std::string(p)) != 0;
      });
    }
    const auto rescans = scan_blobs(store, blobs, hash, options, "hash layer");
    for (std::size_t i = 0; i < rescans.size(); ++i) record(layers[i], *rescans[i]);
  } else {
    for (const auto& entry : wanted) record(entry.first, *scans[entry.first]);
  }

  std::map<std::pair<std::uint64_t, std::string>, DuplicateGroup> groups;
  for (const auto& [size, ids] : by_size)
    for (const std::size_t id : ids) {
      const auto& inode = tree.inodes()[id];
      const auto it = digest_of.find({inode.layer, path_of[id]});
      if (it == digest_of.end()) continue;
      DuplicateGroup& g = groups[{size, it->second}];
      g.size = size;
      g.digest = it->second;
      g.files.push_back(FileReport{"/" + (shown_as[id].empty() ? path_of[id] : shown_as[id]), size,
                                   inode.layer, inode.names - 1});
    }
  std::vector<DuplicateGroup> out;
  for (auto& [key, g] : groups)
    if (g.files.size() >= 2) out.push_back(std::move(g));
  std::sort(out.begin(), out.end(), [](const DuplicateGroup& a, const DuplicateGroup& b) {
    const auto wa = a.size * (a.files.size() - 1), wb = b.size * (b.files.size() - 1);
    return wa != wb ? wa > wb : a.digest < b.digest;
  });
  return out;
}

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

}  // namespace

Analysis analyze_layers(const ResolvedImage& image,
                        const std::vector<std::shared_ptr<const LayerScan>>& scans, std::size_t top,
                        PartialMerge started) {
  // Letting go of a copy's references frees nothing the caller holds.
  return analyze_layers(image, std::vector<std::shared_ptr<const LayerScan>>(scans), top,
                        std::move(started));
}

Analysis analyze_layers(const ResolvedImage& image,
                        std::vector<std::shared_ptr<const LayerScan>>&& scans, std::size_t top,
                        PartialMerge started) {
  Analysis a;
  a.format = image.format;
  a.tags = image.tags;
  a.config_digest = image.config_digest;
  a.os = config_string(image.config, "os");
  a.architecture = config_string(image.config, "architecture");
  a.variant = config_string(image.config, "variant");
  a.warnings = image.warnings;
  const auto created_by = created_by_per_layer(image.config, scans.size(), a.warnings);

  // Where the first layer was merged in part as it was read, the rest of it
  // goes in the same way.
  const bool first_started = started.tree != nullptr && started.first_layer_entries > 0;
  auto tree_owner = started.tree ? std::move(started.tree) : std::make_shared<MergedTree>();
  MergedTree& tree = *tree_owner;
  const MergedTree nothing_below;
  DiveEfficiency dive;
  bool all_compressed = !scans.empty();
  std::uint64_t compressed_total = 0;
  // Package databases: the copy in the highest layer (kept as each scan goes).
  std::map<std::string, CapturedFile> newest;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    const LayerScan& scan = *scans[i];
    const auto index = static_cast<std::uint32_t>(i);
    if (i == 0 && first_started) {
      // The rest of the first layer, read after the feed's last batch. A
      // scan that did not let the feed take its entries holds those it
      // handed over too: they are passed over.
      const std::size_t handed_over = started.first_layer_entries;
      const std::size_t kept_handed_over =
          handed_over > scan.entries_taken
              ? static_cast<std::size_t>(handed_over - scan.entries_taken)
              : 0;
      const auto rest = std::span<const TarEntry>(scan.entries)
                            .subspan(std::min(kept_handed_over, scan.entries.size()));
      tree.add_first_layer(rest);
      if (started.first_layer) {
        started.first_layer->add(rest);
        dive.add_first_layer(*started.first_layer, scan.content_bytes);
        started.first_layer.reset();
      } else {
        dive.add_layer(scan, nothing_below);
      }
    } else {
      dive.add_layer(scan, tree);  // before the layer goes in: dive reads what it hides
      tree.apply(scan, index);
    }

    LayerReport layer;
    layer.index = index;
    if (i < image.layers.size()) {
      layer.digest = image.layers[i].digest;
      layer.diff_id = image.layers[i].diff_id;
    }
    layer.size_bytes = scan.content_bytes;
    layer.blob_bytes = scan.blob_bytes;
    layer.compression = compression_name(scan.compression);
    if (scan.compression != Compression::None) {
      layer.compressed_bytes = scan.blob_bytes;
      compressed_total += scan.blob_bytes;
    } else {
      all_compressed = false;
    }
    layer.entries = scan.entry_count();
    if (i < created_by.size()) layer.created_by = created_by[i];
    a.layers_bytes += scan.content_bytes;
    a.layer_entries += scan.entry_count();
    for (const auto& w : scan.warnings) a.warnings.push_back(w);
    a.layers.push_back(std::move(layer));
    for (const auto& f : scan.captured) newest.insert_or_assign(f.path, f);
    scans[i].reset();  // the tree and dive's lists hold what is needed of it
  }
  if (all_compressed) a.compressed_bytes = compressed_total;
  if (const std::size_t base = base_layers_from_history(image.config); base > 0)
    set_base_layers(a, base, "history");
  for (const auto& w : tree.warnings()) a.warnings.push_back(w);

  a.final_bytes = tree.visible_bytes();
  a.wasted_bytes = a.layers_bytes - a.final_bytes;
  a.final_entries = tree.node_count();
  a.dive = dive.finish(top);

  std::vector<bool> seen(tree.inodes().size(), false);
  for (const EntryType pass : {EntryType::File, EntryType::Hardlink})
    collect_largest(tree.root(), tree.inodes(), pass, seen, a.largest_files, top);
  std::sort(a.largest_files.begin(), a.largest_files.end(), [](const auto& x, const auto& y) {
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.path < y.path;
  });

  a.waste = group_readded(tree.waste());
  std::sort(a.waste.begin(), a.waste.end(), [](const auto& x, const auto& y) {
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.path < y.path;
  });
  a.top = top;

  // Package databases: the copy in the highest layer, if it is still visible.
  for (auto& [path, file] : newest)
    if (const FileNode* node = tree.find(path); node != nullptr && node->type == EntryType::File)
      (file.whole ? a.metadata : a.file_heads).push_back(std::move(file));
  if (const auto cfg = image.config.find("config"); cfg != image.config.end() && cfg->is_object())
    a.working_dir = config_string(*cfg, "WorkingDir");
  a.tree = std::move(tree_owner);
  return a;
}

Analysis analyze_store(const BlobStore& store, const AnalyzeOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ResolvedImage image = resolve_image(store, options.selector);
  PartialMerge started;
  auto scans = scan_all(store, image, options, started);
  // --hash reads the scans again; otherwise each goes once measured.
  Analysis a = options.hash_duplicates
                   ? analyze_layers(image, scans, options.top, std::move(started))
                   : analyze_layers(image, std::move(scans), options.top, std::move(started));
  if (options.base_layers) set_base_layers(a, *options.base_layers, "--base-layers");
  if (options.hash_duplicates)
    a.duplicates = find_duplicates(store, image, scans, *a.tree, options);
  auto store_warnings = store.warnings();
  a.warnings.insert(a.warnings.begin(), store_warnings.begin(), store_warnings.end());
  a.bytes_read = store.bytes_read();
  a.read_via = store.kind();
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

void set_base_layers(Analysis& analysis, std::size_t count, std::string evidence) {
  count = std::min(count, analysis.layers.size());
  for (std::size_t i = 0; i < analysis.layers.size(); ++i) analysis.layers[i].base = i < count;
  analysis.base_layers = count;
  analysis.base_evidence = count > 0 ? std::move(evidence) : std::string();
}

}  // namespace imgsmith
