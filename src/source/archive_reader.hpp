// A libarchive read handle fed from a ByteStream (internal to src/source).
#pragma once

#include <string>
#include <vector>

#include "archive_api.hpp"
#include "imgsmith/source/byte_stream.hpp"

namespace imgsmith {

// The decoded bytes of a gzip/zstd/xz/bzip2 stream (estargz too: it is a
// series of gzip members).
class DecompressingStream final : public ByteStream {
 public:
  DecompressingStream(ByteStream& in, const std::string& label);
  ~DecompressingStream() override;
  std::size_t read(void* buf, std::size_t size) override;
  Compression compression() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace imgsmith

namespace imgsmith::detail {

class ArchiveReader {
 public:
  // Opens `in` as a tar archive, optionally behind gzip/zstd/xz/bzip2.
  // Throws InputError ("<label>: ...") when libarchive cannot start.
  ArchiveReader(ByteStream& in, std::string label, bool allow_filters);
  // Opens `in` as one compressed stream (gzip/zstd/xz/bzip2) whose decoded
  // bytes are read with read_some() after next().
  struct RawTag {};
  ArchiveReader(ByteStream& in, std::string label, RawTag);
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  // Next entry header, or nullptr at the end. Truncation or corruption throws
  // unless it happens between entries and `tolerate_truncation` is set, in
  // which case `truncated()` turns true and nullptr is returned.
  archive_entry* next(bool tolerate_truncation);
  // Skips the current entry's data; throws if the data is cut short. When
  // only the entry's final padding is missing (a writer that never closed
  // the tar), the data is whole: returns false and marks the archive
  // truncated, after which nothing more can be read.
  bool skip_data(const std::string& entry_name, std::uint64_t entry_size);
  // Reads the current entry's data (at most `limit` bytes, else throws).
  std::string read_data(const std::string& entry_name, std::size_t limit);
  // Reads up to size bytes of the current entry's data.
  std::size_t read_some(void* buf, std::size_t size, const std::string& entry_name);

  // Position in the unfiltered input: after next(), the entry's data offset
  // when the input is an uncompressed tar (docs/tar-format.md).
  std::uint64_t raw_position() const;
  Compression compression() const;
  bool truncated() const { return truncated_; }
  const std::string& label() const { return label_; }

 private:
  static la_ssize_t on_read(archive*, void* self, const void** buf);
  static la_int64_t on_skip(archive*, void* self, la_int64_t request);
  [[noreturn]] void fail(const std::string& what) const;

  void open();

  archive* a_ = nullptr;
  ByteStream& in_;
  std::string label_;
  std::vector<char> buffer_;
  bool truncated_ = false;
};

}  // namespace imgsmith::detail
