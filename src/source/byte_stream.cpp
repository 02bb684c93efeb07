#include "imgsmith/source/byte_stream.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "imgsmith/source/file_io.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {

SharedFile::SharedFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    throw InputError(path + ": cannot open: " + std::strerror(errno) +
                     "; check the path and its permissions");
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InputError(path + ": not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

SharedFile::~SharedFile() {
  if (map_ != nullptr) ::munmap(const_cast<char*>(map_), static_cast<std::size_t>(size_));
  if (fd_ >= 0) ::close(fd_);
}

const char* SharedFile::mapped() const {
  std::call_once(map_once_, [this] {
    if (size_ == 0 || size_ > std::numeric_limits<std::size_t>::max()) return;
    void* p = ::mmap(nullptr, static_cast<std::size_t>(size_), PROT_READ, MAP_SHARED, fd_, 0);
    if (p != MAP_FAILED) map_ = static_cast<const char*>(p);
  });
  return map_;
}

void SharedFile::done_with(std::uint64_t from, std::uint64_t to) const {
  if (map_ == nullptr) return;
  // Whole pages only: the pages at either end may hold bytes still read.
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t first = (from + page - 1) / page * page;
  const std::uint64_t last = std::min(to, size_) / page * page;
  if (last > first)
    ::madvise(const_cast<char*>(map_) + first, static_cast<std::size_t>(last - first),
              MADV_DONTNEED);
}

std::size_t SharedFile::pread(void* buf, std::size_t size, std::uint64_t offset) const {
  const ssize_t n = pread_full(fd_, buf, size, offset);
  if (n < 0) throw InputError(path_ + ": read error: " + std::strerror(errno));
  const auto done = static_cast<std::size_t>(n);
  bytes_read_ += done;
  return done;
}

FileRangeStream::FileRangeStream(std::shared_ptr<const SharedFile> file, std::uint64_t offset,
                                 std::uint64_t length)
    : file_(std::move(file)),
      begin_(offset),
      end_(offset + length),
      pos_(offset),
      kept_from_(offset) {
  // A range that runs past the end of the file is read as far as it goes;
  // the tar reader then reports the truncation.
  end_ = std::min(end_, file_->size());
  pos_ = std::min(pos_, end_);
  begin_ = std::min(begin_, end_);
}

std::size_t FileRangeStream::read_at(std::uint64_t offset, void* buf, std::size_t size) {
  if (offset >= end_ - begin_) return 0;
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(size, end_ - begin_ - offset));
  return file_->pread(buf, want, begin_ + offset);
}

std::size_t FileRangeStream::read(void* buf, std::size_t size) {
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(size, end_ - pos_));
  if (want == 0) return 0;
  const std::size_t got = file_->pread(buf, want, pos_);
  pos_ += got;
  return got;
}

std::uint64_t FileRangeStream::skip(std::uint64_t size) {
  const std::uint64_t n = std::min(size, end_ - pos_);
  pos_ += n;
  return n;
}

std::string_view FileRangeStream::lend(std::size_t size) {
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, end_ - pos_));
  if (n == 0) return {};
  const char* base = file_->mapped();
  if (base == nullptr) return {};
  // What was lent a while back leaves the resident set as the reader moves
  // on, so that reading a large save in place does not hold it all.
  constexpr std::uint64_t kKeep = 2u << 20;
  if (pos_ - kept_from_ >= 2 * kKeep) {
    file_->done_with(kept_from_, pos_ - kKeep);
    kept_from_ = pos_ - kKeep;
  }
  const std::string_view view(base + pos_, n);
  pos_ += n;
  file_->count_read(n);
  return view;
}

std::size_t PrefixedStream::read(void* buf, std::size_t size) {
  if (used_ < prefix_.size()) {
    const std::size_t n = std::min(size, prefix_.size() - used_);
    std::memcpy(buf, prefix_.data() + used_, n);
    used_ += n;
    return n;
  }
  return rest_.read(buf, size);
}

std::uint64_t PrefixedStream::skip(std::uint64_t size) {
  const std::uint64_t from_prefix = std::min<std::uint64_t>(size, prefix_.size() - used_);
  used_ += static_cast<std::size_t>(from_prefix);
  if (from_prefix == size) return size;
  return from_prefix + rest_.skip(size - from_prefix);
}

std::size_t PrefixedStream::read_at(std::uint64_t offset, void* buf, std::size_t size) {
  if (offset >= prefix_.size()) return rest_.read_at(offset, buf, size);
  // The prefix holds the stream's first bytes: the same as `rest` there.
  const std::size_t n = std::min(size, prefix_.size() - static_cast<std::size_t>(offset));
  std::memcpy(buf, prefix_.data() + offset, n);
  return n == size ? n : n + rest_.read_at(offset + n, static_cast<char*>(buf) + n, size - n);
}

std::string_view PrefixedStream::lend(std::size_t size) {
  // The prefix is read first; the rest is lent where its stream can.
  if (used_ < prefix_.size()) return {};
  return rest_.lend(size);
}

std::string read_prefix(ByteStream& in, std::size_t size) {
  std::string head(size, '\0');
  std::size_t have = 0;
  while (have < size) {
    const std::size_t n = in.read(head.data() + have, size - have);
    if (n == 0) break;
    have += n;
  }
  head.resize(have);
  return head;
}

void read_to_end(ByteStream& in) {
  std::vector<char> sink(64 * 1024);
  while (in.read(sink.data(), sink.size()) > 0) {
  }
}

Compression sniff_compression(const void* data, std::size_t size) {
  const auto* b = static_cast<const unsigned char*>(data);
  if (size >= 2 && b[0] == 0x1f && b[1] == 0x8b) return Compression::Gzip;
  if (size >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
    return Compression::Zstd;
  if (size >= 3 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h') return Compression::Other;
  if (size >= 6 && b[0] == 0xfd && std::memcmp(b + 1, "7zXZ", 4) == 0) return Compression::Other;
  return Compression::None;
}

bool looks_like_tar(const void* data, std::size_t size) {
  const auto* b = static_cast<const char*>(data);
  if (size >= 262 && std::memcmp(b + 257, "ustar", 5) == 0) return true;
  // An empty layer is nothing but end-of-archive blocks.
  if (size >= 512) return std::all_of(b, b + 512, [](char c) { return c == 0; });
  return false;
}

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::None:
      return "none";
    case Compression::Gzip:
      return "gzip";
    case Compression::Zstd:
      return "zstd";
    case Compression::Other:
      return "other";
  }
  return "other";
}

}  // namespace imgsmith

namespace imgsmith {

std::size_t FdStream::read(void* buf, std::size_t size) {
  for (;;) {
    const ssize_t n = ::read(fd_, buf, size);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) throw InputError(label_ + ": read error: " + std::strerror(errno));
  }
}

}  // namespace imgsmith
