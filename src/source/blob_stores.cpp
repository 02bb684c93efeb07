// The three BlobStore implementations and the content-based choice between them.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "archive_reader.hpp"
#include "gzip_stream.hpp"
#include "imgsmith/source/blob_store.hpp"
#include "imgsmith/source/file_io.hpp"
#include "imgsmith/source/limits.hpp"
#include "imgsmith/util/error.hpp"
#include "tar_reader.hpp"

namespace imgsmith {
namespace {

// What a file's read is held to (SharedFile::check_unchanged).
constexpr const char* kFileUnchanged =
    "the file unchanged (size and modification time) from the start of the read to its end";

// Runs a read of `file` and checks the file when it ends, well or not: a
// save that another process truncated or rewrote meanwhile is reported as
// changed while it was read, not as damaged, and never as fine.
template <class Read>
auto read_checked(const SharedFile& file, Read&& read) {
  try {
    auto result = read();
    file.check_unchanged();
    return result;
  } catch (const InputError&) {
    file.check_unchanged();
    throw;
  }
}

constexpr int kMaxLinkHops = 16;

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Resolves a symbolic link stored at `at` whose target is `target`.
std::string resolve_link(const std::string& at, const std::string& target) {
  if (!target.empty() && target.front() == '/') return normalise_path(target);
  const std::string dir = parent_of(at);
  return normalise_path(dir.empty() ? target : dir + "/" + target);
}

// Looks a member up in a tar's index, following symbolic and hard links
// (a legacy save stores a repeated layer as a link to its first copy).
// Records say they are links by a non-empty `link`.
template <typename Record>
const Record* find_member(const std::unordered_map<std::string, Record>& index, std::string path) {
  path = normalise_path(path);
  for (int hop = 0; hop < kMaxLinkHops; ++hop) {
    const auto it = index.find(path);
    if (it == index.end()) return nullptr;
    if (it->second.link.empty()) return &it->second;
    path = it->second.link;
  }
  return nullptr;
}

template <typename Record>
const Record& require_member(const std::unordered_map<std::string, Record>& index,
                             const std::string& archive, const std::string& path) {
  const Record* r = find_member(index, path);
  if (r == nullptr)
    throw InputError(archive + ": the image refers to '" + path +
                     "', which is missing from the archive; the save is incomplete, save the "
                     "image again");
  return *r;
}

// ---------------------------------------------------------------------------
// A tar file on disk, uncompressed: indexed once, header by header, seeking
// past data. Layers are then read in place, in parallel, as byte ranges.
class TarFileStore final : public BlobStore {
 public:
  TarFileStore(std::shared_ptr<const SharedFile> file, const ProgressFn& progress,
               CaptureFn capture)
      : file_(std::move(file)), capture_(std::move(capture)) {
    // Our own tar reader, not libarchive: this is every docker save's first
    // read, and loading libarchive (dlopen, with its dependencies) would
    // cost more than indexing a save's few entries.
    FileRangeStream whole(file_, 0, file_->size());
    detail::TarReader reader(whole, file_->path());
    read_checked(*file_, [&] {
      detail::TarHeader header;
      while (reader.next(header)) {
        Record rec;
        rec.offset = reader.data_offset();
        rec.size = header.size;
        const std::string path = normalise_path(header.path);
        if (header.type == '1')
          rec.link = normalise_path(header.link);
        else if (header.type == '2')
          rec.link = resolve_link(path, header.link);
        index_[path] = std::move(rec);
      }
      return true;
    });
    if (reader.ended_early())
      warnings_.push_back(file_->path() +
                          ": the tar ends without its end-of-archive blocks; every entry in it "
                          "is complete, so reading on");
    if (progress) progress("indexed " + std::to_string(index_.size()) + " entries");
  }

  const std::string& name() const override { return file_->path(); }
  std::string kind() const override { return "tar"; }
  std::string verified() const override { return kFileUnchanged; }
  bool contains(const std::string& path) const override { return find(path) != nullptr; }
  std::optional<std::uint64_t> size_of(const std::string& path) const override {
    const Record* r = find(path);
    if (r == nullptr) return std::nullopt;
    return r->size;
  }
  std::string read_text(const std::string& path, std::uint64_t limit) const override {
    const Record* r = require(path);
    if (r->size > limit)
      throw InputError(name() + ": '" + path + "' is " + std::to_string(r->size) +
                       " bytes, larger than a JSON document in an image can be");
    std::string out(static_cast<std::size_t>(r->size), '\0');
    if (file_->pread(out.data(), out.size(), r->offset) != out.size())
      throw InputError(name() + ": truncated inside '" + path + "'" + kDamagedAdvice);
    return out;
  }
  std::shared_ptr<const LayerScan> scan_layer(const std::string& path, const CaptureFn& hash,
                                              const EntrySink& sink) const override {
    const Record* r = require(path);
    FileRangeStream range(file_, r->offset, r->size);
    return read_checked(*file_, [&] {
      return std::make_shared<LayerScan>(
          imgsmith::scan_layer(range, r->size, name() + ": layer " + path, capture_, hash, sink));
    });
  }
  bool parallel_scans() const override { return true; }
  std::uint64_t bytes_read() const override { return file_->bytes_read(); }
  std::vector<std::string> warnings() const override { return warnings_; }

 private:
  struct Record {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::string link;  // set for symbolic and hard links
  };

  const Record* find(const std::string& path) const { return find_member(index_, path); }
  const Record* require(const std::string& path) const {
    return &require_member(index_, name(), path);
  }

  std::shared_ptr<const SharedFile> file_;
  CaptureFn capture_;
  std::unordered_map<std::string, Record> index_;
  std::vector<std::string> warnings_;
};

// ---------------------------------------------------------------------------
// A tar that can only be read once, front to back (a compressed save, or
// standard input). manifest.json may come last, so every blob that looks like
// a layer is scanned as it passes; the resolver later picks the ones it needs.
class StreamedTarStore final : public BlobStore {
 public:
  StreamedTarStore(ByteStream& in, std::string label, std::string kind, const ProgressFn& progress,
                   const CaptureFn& capture, const CaptureFn& hash)
      : label_(std::move(label)), kind_(std::move(kind)) {
    // gzip, the usual wrapping, through the decoder that checks each
    // member's trailer (libarchive's filter does not); the rest through
    // libarchive's filters.
    std::string head = read_prefix(in, 8);
    const bool gzip = sniff_compression(head.data(), head.size()) == Compression::Gzip;
    PrefixedStream replay(std::move(head), in);
    if (gzip) {
      detail::GzipStream decoded(replay, label_);
      read_archive(decoded, /*allow_filters=*/false, progress, capture, hash);
      read_to_end(decoded);
    } else {
      read_archive(replay, /*allow_filters=*/true, progress, capture, hash);
    }
  }

  const std::string& name() const override { return label_; }
  std::string kind() const override { return kind_; }
  bool contains(const std::string& path) const override { return find(path) != nullptr; }
  std::optional<std::uint64_t> size_of(const std::string& path) const override {
    const Record* r = find(path);
    if (r == nullptr) return std::nullopt;
    return r->size;
  }
  std::string read_text(const std::string& path, std::uint64_t limit) const override {
    const Record* r = require(path);
    if (!r->text || r->size > limit)
      throw InputError(name() + ": '" + path + "' is not a JSON document");
    return *r->text;
  }

  // Digests were taken, if at all, on the one pass.
  std::shared_ptr<const LayerScan> scan_layer(const std::string& path, const CaptureFn& /*hash*/,
                                              const EntrySink& /*sink*/) const override {
    const Record* r = require(path);
    if (r->scan) return r->scan;
    if (!r->scan_error.empty()) throw InputError(r->scan_error);
    throw InputError(name() + ": layer '" + path + "' is not a tar archive (plain, gzip or zstd)");
  }
  bool parallel_scans() const override { return false; }
  std::uint64_t bytes_read() const override { return bytes_read_; }
  std::vector<std::string> warnings() const override { return warnings_; }

 private:
  void read_archive(ByteStream& in, bool allow_filters, const ProgressFn& progress,
                    const CaptureFn& capture, const CaptureFn& hash) {
    detail::ArchiveReader reader(in, label_, allow_filters);
    while (archive_entry* e = reader.next(/*tolerate_truncation=*/true)) {
      const char* raw = libarchive().entry_pathname(e);
      const std::string path = normalise_path(raw != nullptr ? raw : "");
      Record rec;
      rec.size = static_cast<std::uint64_t>(std::max<la_int64_t>(0, libarchive().entry_size(e)));
      if (libarchive().entry_hardlink(e) != nullptr) {
        rec.link = normalise_path(libarchive().entry_hardlink(e));
      } else if (libarchive().entry_filetype(e) == AE_IFLNK) {
        rec.link =
            resolve_link(path, libarchive().entry_symlink(e) ? libarchive().entry_symlink(e) : "");
      } else if (libarchive().entry_filetype(e) == AE_IFREG && rec.size > 0) {
        read_blob(reader, path, rec, progress, capture, hash);
      }
      records_[path] = std::move(rec);
    }
    if (reader.truncated())
      warnings_.push_back(label_ + ": the tar ends without its end-of-archive blocks; reading on");
  }

  struct Record {
    std::uint64_t size = 0;
    std::string link;
    std::optional<std::string> text;
    std::shared_ptr<const LayerScan> scan;
    std::string scan_error;
  };

  // Reads the current entry's data as it goes past: the outer tar's data is
  // the layer's input.
  class EntryData final : public ByteStream {
   public:
    EntryData(detail::ArchiveReader& reader, const std::string& entry)
        : reader_(reader), entry_(entry) {}
    std::size_t read(void* buf, std::size_t size) override {
      try {
        return reader_.read_some(buf, size, entry_);
      } catch (const InputError&) {
        outer_failed = true;
        throw;
      }
    }
    bool outer_failed = false;

   private:
    detail::ArchiveReader& reader_;
    const std::string& entry_;
  };

  void read_blob(detail::ArchiveReader& reader, const std::string& path, Record& rec,
                 const ProgressFn& progress, const CaptureFn& capture, const CaptureFn& hash) {
    EntryData data(reader, path);
    std::string head = read_prefix(data, 4096);
    bytes_read_ += rec.size;
    const auto first = head.find_first_not_of(" \t\r\n");
    // A document over its limit is not kept: the resolver refuses it by size.
    const std::uint64_t text_limit =
        std::max(input_limits().manifest_bytes, input_limits().config_bytes);
    if (first != std::string::npos && (head[first] == '{' || head[first] == '[') &&
        rec.size <= text_limit) {
      std::string rest = reader.read_data(path, text_limit);
      rec.text = head + rest;
      return;
    }
    if (sniff_compression(head.data(), head.size()) == Compression::None &&
        !looks_like_tar(head.data(), head.size()))
      return;  // neither JSON nor a layer: the reader skips the rest
    PrefixedStream layer(std::move(head), data);
    try {
      rec.scan = std::make_shared<LayerScan>(
          imgsmith::scan_layer(layer, rec.size, name() + ": layer " + path, capture, hash));
      if (progress) progress("scanned " + path);
    } catch (const InputError& e) {
      // A broken outer stream is fatal; a blob that only looked like a layer
      // matters only if the manifest names it.
      if (data.outer_failed) throw;
      rec.scan_error = e.what();
    }
  }

  const Record* find(const std::string& path) const { return find_member(records_, path); }
  const Record* require(const std::string& path) const {
    return &require_member(records_, name(), path);
  }

  std::string label_;
  std::unordered_map<std::string, Record> records_;
  std::string kind_;
  std::vector<std::string> warnings_;
  std::uint64_t bytes_read_ = 0;
};

// ---------------------------------------------------------------------------
// A directory: an OCI image layout, or an unpacked docker save.
class DirectoryStore final : public BlobStore {
 public:
  DirectoryStore(std::string root, CaptureFn capture)
      : root_(std::move(root)), capture_(std::move(capture)) {}

  const std::string& name() const override { return root_; }
  std::string kind() const override { return "directory"; }
  std::string verified() const override { return kFileUnchanged; }
  bool contains(const std::string& path) const override { return size_of(path).has_value(); }
  std::optional<std::uint64_t> size_of(const std::string& path) const override {
    struct stat st {};
    if (::stat(full(path).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return static_cast<std::uint64_t>(st.st_size);
  }
  std::string read_text(const std::string& path, std::uint64_t limit) const override {
    std::error_code error;
    std::string text = read_small_file(full(path), limit, error);
    if (error == std::errc::no_such_file_or_directory || error == std::errc::invalid_argument)
      throw InputError(full(path) + ": missing; the layout is incomplete, copy or save it again");
    if (error == std::errc::file_too_large)
      throw InputError(full(path) + ": too large for a JSON document");
    if (error) throw InputError(full(path) + ": cannot read: " + error.message());
    return text;
  }
  std::shared_ptr<const LayerScan> scan_layer(const std::string& path, const CaptureFn& hash,
                                              const EntrySink& sink) const override {
    if (!contains(path))
      throw InputError(full(path) + ": missing; the layout is incomplete, copy or save it again");
    auto file = std::make_shared<SharedFile>(full(path));
    FileRangeStream range(file, 0, file->size());
    auto scan = read_checked(*file, [&] {
      return std::make_shared<LayerScan>(
          imgsmith::scan_layer(range, file->size(), full(path), capture_, hash, sink));
    });
    bytes_read_ += file->bytes_read();
    return scan;
  }
  bool parallel_scans() const override { return true; }
  std::uint64_t bytes_read() const override { return bytes_read_.load(); }

 private:
  std::string full(const std::string& path) const { return root_ + "/" + normalise_path(path); }

  std::string root_;
  CaptureFn capture_;
  mutable std::atomic<std::uint64_t> bytes_read_{0};
};

}  // namespace

std::unique_ptr<BlobStore> open_stream_store(ByteStream& in, const std::string& label,
                                             const std::string& kind, const ProgressFn& progress,
                                             const CaptureFn& capture,
                                             const CaptureFn& stream_hash) {
  return std::make_unique<StreamedTarStore>(in, label, kind, progress, capture, stream_hash);
}

std::unique_ptr<BlobStore> open_blob_store(const std::string& path, const ProgressFn& progress,
                                           const CaptureFn& capture, const CaptureFn& stream_hash) {
  if (path == "-") {
    FdStream in(STDIN_FILENO, "<stdin>");
    return std::make_unique<StreamedTarStore>(in, "<stdin>", "tar stream", progress, capture,
                                              stream_hash);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path + ": " + std::strerror(errno) +
                     "; give a docker save tar, an OCI archive or an OCI layout directory");
  if (S_ISDIR(st.st_mode)) {
    if (::access(path.c_str(), R_OK | X_OK) != 0)
      throw InputError(path + ": directory not readable: " + std::strerror(errno));
    return std::make_unique<DirectoryStore>(path, capture);
  }
  auto file = std::make_shared<SharedFile>(path);
  if (file->size() == 0)
    throw InputError(path +
                     ": empty file; give a docker save tar, an OCI archive or an OCI "
                     "layout directory");
  char head[512];
  const std::size_t n = file->pread(head, sizeof head, 0);
  if (sniff_compression(head, n) != Compression::None) {
    FileRangeStream whole(file, 0, file->size());
    return read_checked(*file, [&] {
      return std::make_unique<StreamedTarStore>(whole, path, "compressed tar", progress, capture,
                                                stream_hash);
    });
  }
  if (!looks_like_tar(head, n))
    throw InputError(path +
                     ": not a container image: neither a tar archive (docker save, OCI archive), "
                     "a gzip/zstd-compressed one, nor an OCI layout directory");
  return std::make_unique<TarFileStore>(std::move(file), progress, capture);
}

}  // namespace imgsmith
