// One layer, read as a list of tar entries. File data is never kept: a scan
// records what each entry is and how many bytes it carries.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "imgsmith/source/byte_stream.hpp"
#include "imgsmith/source/entry_listing.hpp"
#include "imgsmith/util/bulk_memory.hpp"
#include "imgsmith/util/forward_reader.hpp"
#include "imgsmith/util/text.hpp"
#include "imgsmith/util/text_arena.hpp"

namespace imgsmith {

enum class EntryType : std::uint8_t { File, Dir, Symlink, Hardlink, Other };

// Paths and links are views into the LayerScan's text arena.
struct TarEntry {
  std::string_view path;   // normalised: no leading "/" or "./", no trailing "/"
  std::string_view link;   // hard-link target (normalised) or symlink target (as stored)
  std::uint64_t size = 0;  // content bytes; only regular files carry any
  EntryType type = EntryType::Other;
};

// A file whose content the analysis needs, read while the layer is scanned:
// whole for package databases (dpkg file lists, Python RECORD files), the
// first bytes only for files judged by their content (model formats).
struct CapturedFile {
  std::string path;  // normalised
  std::string content;
  bool whole = true;  // false: `content` is the file's first bytes
  // What the capture's inspector made of the whole file as it streamed
  // past, as the inspector's own record (a ModelFile for a model
  // file's headers: the reader is below the models library, so it holds the
  // record without naming its type); empty when it had nothing to say.
  std::any inspected;
  // A symbolic link, kept because the capture asked for its target
  // (CaptureFn::keeps_link): `content` is the target as stored.
  bool symlink = false;
};

// Receives a layer's entries, in tar order and in batches, on the thread
// that scans the layer while the scan goes on. A batch is only valid during
// the call; the paths it views stay valid as long as the finished scan,
// unless the sink takes the entries: it then copies what it needs of them
// during the call, and a scan that honours that keeps none of them (a
// layer of millions of entries is never held whole), only their count.
class EntrySink {
 public:
  EntrySink() = default;
  template <class Fn>
  requires(!std::is_same_v<std::remove_cvref_t<Fn>, EntrySink>) explicit EntrySink(
      Fn fn, bool takes_entries = false)
      : fn_(std::move(fn)), takes_(takes_entries) {}

  void operator()(std::span<const TarEntry> batch) const { fn_(batch); }
  explicit operator bool() const { return static_cast<bool>(fn_); }
  bool takes_entries() const { return takes_; }

 private:
  std::function<void(std::span<const TarEntry> batch)> fn_;
  bool takes_ = false;
};

// Which entries to capture, by normalised path and size: how many of the
// file's first bytes to keep (0: none; kCaptureAll, or the size or more: the
// whole file). Used to pick files to digest too, where nonzero means digest.
// An inspector, when given, reads on past the first bytes of each file
// captured in part, stepping over what it does not need (how model headers
// are read from the stream without keeping the weights), and returns the
// record to keep of it in CapturedFile::inspected (empty: nothing).
// Symbolic links are kept (their targets) where `keep_link` says so: how a
// Hugging Face cache's snapshot names reach the blobs they point to.
class CaptureFn {
 public:
  using Select = std::function<std::uint64_t(std::string_view path, std::uint64_t size)>;
  using Inspect = std::function<std::any(std::string_view path, std::uint64_t size,
                                         std::string_view head, ForwardReader& rest)>;
  using KeepLink = std::function<bool(std::string_view path)>;

  CaptureFn() = default;
  template <typename Fn>
  requires std::is_invocable_r_v<std::uint64_t, Fn&, std::string_view, std::uint64_t> &&
      (!std::is_same_v<std::remove_cvref_t<Fn>, CaptureFn>)
          CaptureFn(Fn fn)  // NOLINT(google-explicit-constructor): a plain selector converts
      : select_(std::move(fn)) {}
  CaptureFn(Select select, Inspect inspect, KeepLink keep_link = {})
      : select_(std::move(select)),
        inspect_(std::move(inspect)),
        keep_link_(std::move(keep_link)) {}

  std::uint64_t operator()(std::string_view path, std::uint64_t size) const {
    return select_(path, size);
  }
  explicit operator bool() const { return static_cast<bool>(select_); }
  const Inspect& inspect() const { return inspect_; }
  bool keeps_link(std::string_view path) const { return keep_link_ && keep_link_(path); }

 private:
  Select select_;
  Inspect inspect_;
  KeepLink keep_link_;
};
inline constexpr std::uint64_t kCaptureAll = UINT64_MAX;

struct LayerScan {
  // The entries read, less those a sink took (EntrySink::takes_entries),
  // which were read before the rest.
  std::pmr::vector<TarEntry> entries{bulk_memory()};
  std::uint64_t entries_taken = 0;
  TextArena text;  // what the entries' paths and links view
  std::vector<CapturedFile> captured;
  std::vector<std::pair<std::string, std::string>> digests;  // path, sha256 (when asked)
  std::uint64_t content_bytes = 0;                           // sum of regular-file sizes
  std::uint64_t blob_bytes = 0;                              // bytes of the blob as stored
  Compression compression = Compression::None;
  std::vector<std::string> warnings;
  EntryListing listing;  // every entry, kept or taken

  // Counts the entry in the listing and keeps it.
  void add(const TarEntry& entry) {
    listing.add(static_cast<std::uint8_t>(entry.type), entry.path, entry.size, entry.link);
    entries.push_back(entry);
  }

  // Every entry of the layer, kept or taken.
  std::uint64_t entry_count() const { return entries_taken + entries.size(); }
};

// Reads a layer tar, plain or gzip/zstd-compressed (judged by its first
// bytes), entry by entry, skipping file data (by seeking where the stream can).
// `label` names the blob in messages. Throws InputError on a corrupt or
// truncated layer; a layer that merely lacks its end-of-archive blocks after
// its last complete entry gets a warning instead (umoci writes such layers).
// `capture` picks files whose content to keep; `hash` files whose content to
// digest (SHA-256) as it streams past.
// `sink`, when given, sees the entries as they are read; the finished scan
// holds them all, unless the sink takes them.
LayerScan scan_layer(ByteStream& in, std::uint64_t blob_bytes, const std::string& label,
                     const CaptureFn& capture = {}, const CaptureFn& hash = {},
                     const EntrySink& sink = {});

// What inflates gzip layers in this build, for --version: "ISA-L 2.30.0"
// (libisal-dev found at build time) or "zlib".
const char* gzip_inflater();

// A regular file's content, wherever it is read from: a tar entry's data,
// or a file in a directory that holds a layer unpacked.
class EntryContent {
 public:
  virtual ~EntryContent() = default;
  virtual std::string read_all() = 0;
  // At most `bytes` from the start.
  virtual std::string read_head(std::uint64_t bytes) = 0;
  virtual void stream(const std::function<void(const char*, std::size_t)>& chunk) = 0;
  // Front to back from where the last read ended (the start, at first):
  // up to `n` bytes, fewer only at the end; and steps over `n` bytes,
  // seeking where the source can, returning how many there were.
  virtual std::size_t read_some(char* out, std::size_t n) = 0;
  virtual std::uint64_t skip_some(std::uint64_t n) = 0;
  // Whether read_at() works (ForwardReader::reads_at): the content lies in
  // a file, not in a stream that goes by.
  virtual bool reads_at() const { return false; }
  // Up to `n` bytes at `offset` from the content's first byte, leaving the
  // front-to-back reading where it is.
  virtual std::size_t read_at(std::uint64_t /*offset*/, char* /*out*/, std::size_t /*n*/) {
    return 0;
  }
};

// Keeps what `capture` and `hash` ask of one regular file of a layer (its
// content, its first bytes, its digest), as scan_layer does for a tar entry.
void keep_content(LayerScan& scan, std::string_view path, std::uint64_t size,
                  const CaptureFn& capture, const CaptureFn& hash, EntryContent& content);
// Keeps a symbolic link's target when `capture` asks for it.
void keep_link(LayerScan& scan, std::string_view path, std::string_view target,
               const CaptureFn& capture);

}  // namespace imgsmith
