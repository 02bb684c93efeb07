#include "imgsmith/source/layer_scan.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "archive_reader.hpp"
#include "gzip_stream.hpp"
#include "imgsmith/source/limits.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/sha256.hpp"
#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"
#include "tar_reader.hpp"

namespace imgsmith {

namespace {

EntryType entry_type(char tar_type) {
  switch (tar_type) {
    case '0':
    case '7':
    case 'S':
      return EntryType::File;
    case '1':
      return EntryType::Hardlink;
    case '2':
      return EntryType::Symlink;
    case '5':
      return EntryType::Dir;
    default:
      return EntryType::Other;
  }
}

// The data of the entry a TarReader just returned.
class TarEntryContent final : public EntryContent {
 public:
  explicit TarEntryContent(detail::TarReader& reader) : reader_(reader) {}
  std::string read_all() override { return reader_.read_entry_data(); }
  std::string read_head(std::uint64_t bytes) override { return reader_.read_entry_head(bytes); }
  void stream(const std::function<void(const char*, std::size_t)>& chunk) override {
    reader_.stream_entry_data(chunk);
  }
  std::size_t read_some(char* out, std::size_t n) override {
    return reader_.read_entry_some(out, n);
  }
  std::uint64_t skip_some(std::uint64_t n) override { return reader_.skip_entry_data(n); }
  bool reads_at() const override { return reader_.reads_entry_at(); }
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t n) override {
    return reader_.read_entry_at(offset, out, n);
  }

 private:
  detail::TarReader& reader_;
};

// Entries go to a sink in batches this large: small enough that a consumer
// starts early, large enough that handing over costs nothing.
constexpr std::size_t kSinkBatch = 4096;

void scan_entries(ByteStream& tar, const std::string& label, const CaptureFn& capture,
                  const CaptureFn& hash, const EntrySink& sink, LayerScan& scan) {
  std::size_t delivered = 0;
  const auto deliver = [&] {
    sink(std::span<const TarEntry>(scan.entries).subspan(delivered));
    delivered = scan.entries.size();
    if (sink.takes_entries()) {
      // The sink has copied what it needs: the batch and its text go.
      scan.entries_taken += scan.entries.size();
      scan.entries.clear();
      scan.text.reset();
      delivered = 0;
    }
  };
  detail::TarReader reader(tar, label);
  detail::TarHeader header;
  const InputLimits& limits = input_limits();
  while (reader.next(header)) {
    if (scan.entries_taken + scan.entries.size() >= limits.entries)
      throw InputError(label + ": more than " + format_count(limits.entries) + " entries, over " +
                       limit_hint("entries"));
    if (header.path.size() > limits.path_bytes || header.link.size() > limits.path_bytes)
      throw InputError(label + ": a path of " +
                       format_count(std::max(header.path.size(), header.link.size())) +
                       " bytes ('" + header.path.substr(0, 60) + "...'), over " +
                       limit_hint("path") + "; the layer is damaged or hostile");
    TarEntry entry;
    entry.path = is_normal_path(header.path) ? scan.text.store(header.path)
                                             : scan.text.store(normalise_path(header.path));
    if (entry.path.empty()) continue;  // the root directory itself
    // The merge and the walks recurse once per directory level.
    if (static_cast<std::uint64_t>(std::count(entry.path.begin(), entry.path.end(), '/')) >
        limits.depth)
      throw InputError(label + ": '" + std::string(entry.path.substr(0, 80)) +
                       "...' nests deeper than " + limit_hint("depth") +
                       "; the layer is damaged or hostile");
    entry.type = entry_type(header.type);
    // Old tars mark directories only by a trailing slash on a regular entry.
    if (entry.type == EntryType::File && !header.path.empty() && header.path.back() == '/')
      entry.type = EntryType::Dir;
    if (entry.type == EntryType::File) entry.size = header.size;
    if (entry.type == EntryType::Hardlink)
      entry.link = scan.text.store(normalise_path(header.link));
    if (entry.type == EntryType::Symlink) {
      entry.link = scan.text.store(header.link);
      keep_link(scan, entry.path, entry.link, capture);
    }
    if (entry.type == EntryType::File) {
      TarEntryContent content(reader);
      keep_content(scan, entry.path, entry.size, capture, hash, content);
    }
    scan.content_bytes += entry.size;
    scan.add(entry);
    if (sink && scan.entries.size() - delivered >= kSinkBatch) deliver();
  }
  if (sink && scan.entries.size() > delivered) deliver();
  if (reader.ended_early())
    scan.warnings.push_back(label + ": layer ends without tar end-of-archive blocks after its " +
                            std::to_string(scan.entry_count()) +
                            " entries; reading it as complete");
}

}  // namespace

namespace {

// An entry's content as a ForwardReader, digesting what passes when asked:
// a step then reads the bytes it passes instead of seeking.
class ContentReader final : public ForwardReader {
 public:
  ContentReader(EntryContent& content, Sha256* digest) : content_(content), digest_(digest) {}

  // Bytes fetched out of order would not be digested: with a digest, the
  // content is read front to back only.
  bool reads_at() const override { return digest_ == nullptr && content_.reads_at(); }
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t n) override {
    return reads_at() ? content_.read_at(offset, out, n) : 0;
  }

  // Reads what is left, for the digest.
  void drain() {
    char buf[65536];
    while (read_some(buf, sizeof buf) > 0) {
    }
  }

 protected:
  std::size_t read_some(char* out, std::size_t n) override {
    const std::size_t got = content_.read_some(out, n);
    if (digest_ != nullptr) digest_->update(out, got);
    return got;
  }
  std::uint64_t skip_some(std::uint64_t n) override {
    if (digest_ == nullptr) return content_.skip_some(n);
    char buf[65536];
    std::uint64_t done = 0;
    while (done < n) {
      const std::size_t got =
          read_some(buf, static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, n - done)));
      if (got == 0) break;
      done += got;
    }
    return done;
  }

 private:
  EntryContent& content_;
  Sha256* digest_;
};

// The first `keep` bytes, then whatever the inspector reads on.
void inspect_content(LayerScan& scan, std::string_view path, std::uint64_t size, std::uint64_t keep,
                     const CaptureFn& capture, bool digest_it, EntryContent& content) {
  // Only when asked: a digest's first use loads OpenSSL's provider tables.
  std::optional<Sha256> digest;
  if (digest_it) digest.emplace();
  ContentReader reader(content, digest ? &*digest : nullptr);
  std::string head;
  reader.read_exact(head, static_cast<std::size_t>(std::min(keep, size)));
  std::any inspected = capture.inspect()(path, size, head, reader);
  if (digest_it) {
    reader.drain();
    scan.digests.emplace_back(std::string(path), digest->digest());
  }
  scan.captured.push_back(
      CapturedFile{std::string(path), std::move(head), false, std::move(inspected)});
}

}  // namespace

void keep_link(LayerScan& scan, std::string_view path, std::string_view target,
               const CaptureFn& capture) {
  if (!capture.keeps_link(path)) return;
  CapturedFile link{std::string(path), std::string(target), true, {}};
  link.symlink = true;
  scan.captured.push_back(std::move(link));
}

void keep_content(LayerScan& scan, std::string_view path, std::uint64_t size,
                  const CaptureFn& capture, const CaptureFn& hash, EntryContent& content) {
  const std::uint64_t keep = capture ? capture(path, size) : 0;
  if (keep > 0 && keep < size && capture.inspect()) {
    inspect_content(scan, path, size, keep, capture, hash && hash(path, size) != 0, content);
  } else if (keep > 0 && keep >= size) {
    std::string whole = content.read_all();
    // A small file the inspector may know (an ONNX graph whose weights are
    // external data): all of it is the head.
    std::any inspected;
    if (capture.inspect()) {
      StringReader nothing_more({});
      inspected = capture.inspect()(path, size, whole, nothing_more);
    }
    scan.captured.push_back(
        CapturedFile{std::string(path), std::move(whole), true, std::move(inspected)});
  } else if (hash && hash(path, size) != 0) {
    // Digested as it streams past; its first bytes kept on the way.
    Sha256 digest;
    std::string head;
    content.stream([&](const char* p, std::size_t n) {
      digest.update(p, n);
      if (head.size() < keep) head.append(p, std::min<std::size_t>(n, keep - head.size()));
    });
    scan.digests.emplace_back(std::string(path), digest.digest());
    if (keep > 0)
      scan.captured.push_back(CapturedFile{std::string(path), std::move(head), false, {}});
  } else if (keep > 0) {
    scan.captured.push_back(CapturedFile{std::string(path), content.read_head(keep), false, {}});
  }
}

namespace {

// A compressed layer's entries, then the rest of the stream: a tar ends
// before the compressed stream around it does (the record's padding, then
// the trailer with the checksum and length), and decoding it to its end is
// what checks them.
void scan_decoded(ByteStream& decoded, const std::string& label, const CaptureFn& capture,
                  const CaptureFn& hash, const EntrySink& sink, LayerScan& scan) {
  scan_entries(decoded, label, capture, hash, sink, scan);
  read_to_end(decoded);
}

}  // namespace

LayerScan scan_layer(ByteStream& in, std::uint64_t blob_bytes, const std::string& label,
                     const CaptureFn& capture, const CaptureFn& hash, const EntrySink& sink) {
  LayerScan scan;
  scan.blob_bytes = blob_bytes;
  // The first bytes tell the encoding; they are replayed to the reader.
  std::string head = read_prefix(in, 8);
  scan.compression = sniff_compression(head.data(), head.size());
  PrefixedStream replay(std::move(head), in);
  if (scan.compression == Compression::None) {
    // Every entry takes at least a 512-byte header, most a data block too:
    // reserving for one per KiB spares the copies of a growing vector, and
    // pages of the reserve that go unused are never touched.
    scan.entries.reserve(
        static_cast<std::size_t>(std::min<std::uint64_t>(blob_bytes / 1024 + 16, 1u << 20)));
    scan_entries(replay, label, capture, hash, sink, scan);
  } else if (scan.compression == Compression::Gzip) {
    detail::GzipStream decoded(replay, label);
    scan_decoded(decoded, label, capture, hash, sink, scan);
  } else {
    DecompressingStream decoded(replay, label);
    scan.compression = decoded.compression();
    scan_decoded(decoded, label, capture, hash, sink, scan);
  }
  return scan;
}

}  // namespace imgsmith
