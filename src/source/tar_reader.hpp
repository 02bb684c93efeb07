// A tar header reader for layers (internal to src/source). Layers are where
// an image's entries are, hundreds of thousands of them; reading headers
// directly, and skipping data by seeking, is several times faster than a
// general archive library that converts every name to wide characters.
// Understands ustar, GNU (long names and links, base-256 sizes) and pax
// (path, linkpath, size) headers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "imgsmith/source/byte_stream.hpp"

namespace imgsmith::detail {

struct TarHeader {
  std::string path;  // as stored
  std::string link;
  char type = '0';
  std::uint64_t size = 0;  // bytes of data that follow the header
};

class TarReader {
 public:
  TarReader(ByteStream& in, std::string label);

  // Reads the next entry's header, skipping the previous entry's data first.
  // Returns false at the end of the archive. Throws InputError on a corrupt
  // header or data cut short. An archive that simply stops after a complete
  // entry (no end blocks, or not even the last entry's padding) ends with
  // ended_early() set.
  bool next(TarHeader& header);
  bool ended_early() const { return ended_early_; }
  // Where the data of the entry next() just returned starts in the
  // archive; valid until its data is read or skipped.
  std::uint64_t data_offset() const { return offset_; }
  // Reads the data of the entry next() just returned, instead of skipping
  // it. Throws InputError when the data is cut short.
  std::string read_entry_data();
  // Reads at most `n` bytes from the start of that entry's data; the rest
  // is skipped (by seeking where the stream can) by the next next().
  std::string read_entry_head(std::uint64_t n);
  // Front to back through that entry's data, from where the last read
  // ended: up to `n` bytes (0 at its end), and a step over `n` bytes (by
  // seeking where the stream can). Both throw InputError when the archive
  // ends inside the entry.
  std::size_t read_entry_some(char* out, std::size_t n);
  std::uint64_t skip_entry_data(std::uint64_t n);
  // Whether read_entry_at() works: the archive's stream lies in a file.
  bool reads_entry_at() const { return in_.reads_at(); }
  // Up to `n` bytes at `offset` of that entry's data, wherever its reading
  // stands (which stays where it is); fewer only at the entry's end. Throws
  // InputError when the archive ends inside the entry.
  std::size_t read_entry_at(std::uint64_t offset, char* out, std::size_t n);
  // Streams the data of the entry next() just returned to `sink`.
  template <typename Sink>
  void stream_entry_data(Sink&& sink);

 private:
  // Makes `n` bytes available at pos_; returns how many are (fewer at EOF).
  std::size_t fill(std::size_t n);
  // Skips `n` bytes; returns how many could be skipped before EOF.
  std::uint64_t skip(std::uint64_t n);
  std::string read_data(std::uint64_t size, const char* what);

  // Makes up to `want` bytes of the current entry's data available and
  // returns how many; throws when the archive ends first.
  std::size_t next_data_chunk(std::size_t want);

  ByteStream& in_;
  std::string label_;
  std::vector<char> buf_;
  // What is being read: buf_, or bytes the stream lent (read in place).
  const char* data_;
  std::size_t pos_ = 0, end_ = 0;
  std::uint64_t offset_ = 0;  // archive offset of data_[pos_]
  std::uint64_t pending_data_ = 0, pending_padding_ = 0;
  // The archive offset and size of the data of the entry next() returned.
  std::uint64_t entry_start_ = 0, entry_size_ = 0;
  std::string pending_name_;
  bool ended_early_ = false;
  bool first_ = true;
};

template <typename Sink>
void TarReader::stream_entry_data(Sink&& sink) {
  while (pending_data_ > 0) {
    const std::size_t got = next_data_chunk(
        static_cast<std::size_t>(std::min<std::uint64_t>(pending_data_, buf_.size())));
    sink(data_ + pos_, got);
    pos_ += got;
    offset_ += got;
    pending_data_ -= got;
  }
}

}  // namespace imgsmith::detail
