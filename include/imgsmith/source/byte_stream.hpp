// Byte streams that feed the tar readers. A stream over a byte range of a
// regular file can skip by seeking, which is what lets an uncompressed layer
// be read header by header without touching file data.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace imgsmith {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads up to `size` bytes; returns 0 only at the end of the stream.
  // Throws InputError on an I/O error.
  virtual std::size_t read(void* buf, std::size_t size) = 0;
  // Skips up to `size` bytes without reading them; returns how many were
  // skipped. 0 means "cannot skip here": the caller reads instead.
  virtual std::uint64_t skip(std::uint64_t /*size*/) { return 0; }
  // A stream whose bytes are already in memory (a mapped file) lends up to
  // `size` of its next bytes instead of copying them: they count as read,
  // and the view stays valid while the stream lives. Empty where the
  // stream cannot lend (or is at its end): the caller reads instead.
  virtual std::string_view lend(std::size_t /*size*/) { return {}; }
  // Whether read_at() works: the stream's bytes lie in a file (an
  // uncompressed layer), so that a reader can fetch a few of them anywhere.
  virtual bool reads_at() const { return false; }
  // Up to `size` bytes at `offset` from the stream's first byte, leaving the
  // stream where it is; fewer only at its end; 0 where reads_at() is false.
  // Throws InputError on an I/O error.
  virtual std::size_t read_at(std::uint64_t /*offset*/, void* /*buf*/, std::size_t /*size*/) {
    return 0;
  }
};

// An open regular file shared by the streams that read ranges of it.
// pread() keeps concurrent readers of one descriptor independent.
class SharedFile {
 public:
  // Throws InputError naming `path` when it cannot be opened.
  explicit SharedFile(const std::string& path);
  ~SharedFile();
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  // Reads at an absolute offset; short only at the end of the file as it
  // was opened. A read cut short before that end means another process
  // shrank the file: InputError, "changed while it was read".
  std::size_t pread(void* buf, std::size_t size, std::uint64_t offset) const;
  // Throws InputError naming the file when it is no longer as it was
  // opened: another size or modification time, or a read through the
  // mapping past its new end (the page came back as zeros, see mapped()).
  // Readers call it when they are done, and before they report a damaged
  // file, so a file that changed under them is said to have changed.
  void check_unchanged() const;
  // Bytes this process actually read from the file (for the I/O report).
  std::uint64_t bytes_read() const { return bytes_read_.load(); }

  // The whole file mapped read-only, mapped on first use; null where it
  // cannot be (then pread it). Reading many small entries in place spares
  // copying every byte of them from the page cache. Another process may
  // truncate the file meanwhile: reading past its new end would raise
  // SIGBUS; a handler gives the reader a page of zeros instead and marks
  // the file changed, for check_unchanged() to report.
  const char* mapped() const;
  // [from, to) will not be read again through the mapping by this reader:
  // its pages leave this process's resident set (the page cache keeps
  // them; reading them again faults them back in).
  void done_with(std::uint64_t from, std::uint64_t to) const;
  // Lent bytes count as read.
  void count_read(std::uint64_t n) const { bytes_read_ += n; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::int64_t mtime_ns_ = 0;  // at open
  mutable std::atomic<std::uint64_t> bytes_read_{0};
  mutable std::once_flag map_once_;
  mutable const char* map_ = nullptr;
  mutable int guard_slot_ = -1;  // the mapping's entry in the SIGBUS handler's table
};

// [offset, offset + length) of a shared file.
class FileRangeStream : public ByteStream {
 public:
  FileRangeStream(std::shared_ptr<const SharedFile> file, std::uint64_t offset,
                  std::uint64_t length);
  std::size_t read(void* buf, std::size_t size) override;
  std::uint64_t skip(std::uint64_t size) override;
  std::string_view lend(std::size_t size) override;
  bool reads_at() const override { return true; }
  std::size_t read_at(std::uint64_t offset, void* buf, std::size_t size) override;

 private:
  std::shared_ptr<const SharedFile> file_;
  std::uint64_t begin_;
  std::uint64_t end_;
  std::uint64_t pos_;
  std::uint64_t kept_from_;  // lent pages before this have left the resident set
};

// A stream that first replays bytes already read (to sniff a format), then
// continues with the underlying stream.
class PrefixedStream : public ByteStream {
 public:
  PrefixedStream(std::string prefix, ByteStream& rest) : prefix_(std::move(prefix)), rest_(rest) {}
  std::size_t read(void* buf, std::size_t size) override;
  std::uint64_t skip(std::uint64_t size) override;
  std::string_view lend(std::size_t size) override;
  // The prefix must be the first bytes of `rest` (as read_prefix reads
  // them): offsets past it are `rest`'s own.
  bool reads_at() const override { return rest_.reads_at(); }
  std::size_t read_at(std::uint64_t offset, void* buf, std::size_t size) override;

 private:
  std::string prefix_;
  std::size_t used_ = 0;
  ByteStream& rest_;
};

// Reads up to `size` bytes, fewer only at the end of the stream.
std::string read_prefix(ByteStream& in, std::size_t size);

// Reads `in` to its end, keeping nothing. A tar ends before the compressed
// stream around it does (the record's padding, then the trailer with the
// checksum and length): decoding it to its end is what checks them.
void read_to_end(ByteStream& in);

// The first bytes of a blob tell its encoding (docs/image-formats.md: never
// trust the media type alone).
enum class Compression : std::uint8_t { None, Gzip, Zstd, Other };
Compression sniff_compression(const void* data, std::size_t size);
bool looks_like_tar(const void* data, std::size_t size);
const char* compression_name(Compression c);

}  // namespace imgsmith

namespace imgsmith {

// A plain file descriptor read to its end (standard input).
class FdStream : public ByteStream {
 public:
  FdStream(int fd, std::string label) : fd_(fd), label_(std::move(label)) {}
  std::size_t read(void* buf, std::size_t size) override;

 private:
  int fd_;
  std::string label_;
};

}  // namespace imgsmith
