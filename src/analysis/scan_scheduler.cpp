// The scans of an image's layers: several blobs at a time where the store
// can seek, and the first layer merged while it is still being read.
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
#include <thread>

#include "analyze_internal.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/worker_threads.hpp"

namespace imgsmith {

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

namespace {

// "reading layers 2/7: 1.20 GB of 3.40 GB, 150 MB/s, about 15 s left".
std::string progress_text(const char* what, std::size_t done, std::size_t total,
                          std::uint64_t done_bytes, std::uint64_t total_bytes, double seconds) {
  std::string text = std::string(what) + " " + std::to_string(done) + "/" + std::to_string(total);
  if (total_bytes == 0) return text;
  text += ": " + format_size(done_bytes) + " of " + format_size(total_bytes);
  if (done_bytes > 0 && seconds > 0.05) {
    const double rate = static_cast<double>(done_bytes) / seconds;
    text += ", " + format_size(static_cast<std::uint64_t>(rate)) + "/s";
    if (done_bytes < total_bytes) {
      const auto left =
          static_cast<std::uint64_t>(static_cast<double>(total_bytes - done_bytes) / rate + 0.5);
      text += left < 60 ? ", about " + std::to_string(left) + " s left"
                        : ", about " + std::to_string((left + 30) / 60) + " min left";
    }
  }
  return text;
}

}  // namespace

// Scans distinct blobs, several at a time when the store can seek; the
// first error (in blob order) is rethrown once all have stopped. With a
// feed, the scans run on other threads and this one merges the first blob.
std::vector<std::shared_ptr<const LayerScan>> scan_blobs(const BlobStore& store,
                                                         const std::vector<std::string>& blobs,
                                                         const std::vector<CaptureFn>& hash,
                                                         const AnalyzeOptions& options,
                                                         const char* what, FirstLayerFeed* feed) {
  std::vector<std::shared_ptr<const LayerScan>> results(blobs.size());
  std::vector<std::exception_ptr> errors(blobs.size());
  std::atomic<std::size_t> next{0};
  std::mutex progress_lock;  // guards done and done_bytes: the line is shown in order
  // The progress line: layers and bytes done (the blobs' stored sizes, when
  // the store knows them), the rate so far and the time left at that rate.
  std::vector<std::uint64_t> blob_bytes(blobs.size(), 0);
  std::size_t done = 0;
  std::uint64_t total_bytes = 0, done_bytes = 0;
  const auto started = std::chrono::steady_clock::now();
  if (options.progress) {
    for (std::size_t i = 0; i < blobs.size(); ++i) {
      blob_bytes[i] = store.size_of(blobs[i]).value_or(0);
      total_bytes += blob_bytes[i];
    }
    options.progress(progress_text(what, 0, blobs.size(), 0, total_bytes, 0.0));
  }
  auto worker = [&] {
    for (std::size_t i = next++; i < blobs.size(); i = next++) {
      try {
        results[i] = store.scan_layer(blobs[i], hash.empty() ? CaptureFn{} : hash[i],
                                      i == 0 && feed != nullptr ? feed->sink() : EntrySink{});
      } catch (...) {
        errors[i] = std::current_exception();
      }
      if (i == 0 && feed != nullptr) feed->close();
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_lock);
        const std::size_t finished = ++done;
        done_bytes += blob_bytes[i];
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        options.progress(
            progress_text(what, finished, blobs.size(), done_bytes, total_bytes, seconds));
      }
    }
  };
  unsigned threads = options.threads != 0                 ? options.threads
                     : store.preferred_parallelism() != 0 ? store.preferred_parallelism()
                                                          : std::thread::hardware_concurrency();
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(blobs.size())));
  if (!store.parallel_scans()) threads = 1;
  if (feed != nullptr) {
    // This thread merges what the scans hand over, so at least one other
    // must scan.
    WorkerThreads pool;
    if (pool.start(threads, worker) == 0)
      throw EnvironmentError(
          "cannot start a thread to read the layers (the system refused: check the process "
          "limit, ulimit -u, and free memory)");
    std::exception_ptr merge_error;
    try {
      feed->merge_until_closed();
    } catch (...) {
      merge_error = std::current_exception();  // the scans still have to stop first
    }
    pool.join();
    if (merge_error) std::rethrow_exception(merge_error);
  } else {
    // Whatever threads start share the layers with this one.
    WorkerThreads pool;
    pool.start(threads - 1, worker);
    worker();
    pool.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

// Scans each distinct blob once (a save may list one digest twice). Where
// the store reads local files, a first layer that is not small is merged
// into `started` as it is read.
std::vector<std::shared_ptr<const LayerScan>> scan_all(const BlobStore& store,
                                                       const ResolvedImage& image,
                                                       const AnalyzeOptions& options,
                                                       PartialMerge& started) {
  std::vector<std::string> unique;
  std::map<std::string, std::size_t> slot;
  for (const auto& l : image.layers)
    if (slot.emplace(l.blob, unique.size()).second) unique.push_back(l.blob);
  std::optional<FirstLayerFeed> feed;
  if (store.parallel_scans() && !unique.empty() &&
      store.size_of(unique.front()).value_or(UINT64_MAX) >= options.merge_while_reading_from) {
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

}  // namespace imgsmith
