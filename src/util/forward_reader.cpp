#include "imgsmith/util/forward_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "imgsmith/util/error.hpp"

namespace imgsmith {

std::size_t ForwardReader::read(char* out, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const std::size_t got = read_some(out + done, n - done);
    if (got == 0) break;
    done += got;
  }
  position_ += done;
  return done;
}

std::uint64_t ForwardReader::skip(std::uint64_t n) {
  const std::uint64_t done = skip_some(n);
  position_ += done;
  return done;
}

bool ForwardReader::read_exact(std::string& out, std::size_t n) {
  const std::size_t before = out.size();
  out.resize(before + n);
  const std::size_t got = read(out.data() + before, n);
  out.resize(before + got);
  return got == n;
}

std::size_t StringReader::read_some(char* out, std::size_t n) {
  const std::size_t take = std::min(n, bytes_.size() - at_);
  std::memcpy(out, bytes_.data() + at_, take);
  at_ += take;
  return take;
}

std::uint64_t StringReader::skip_some(std::uint64_t n) {
  const std::size_t take =
      static_cast<std::size_t>(std::min<std::uint64_t>(n, bytes_.size() - at_));
  at_ += take;
  return take;
}

std::size_t PrefixedReader::read_some(char* out, std::size_t n) {
  if (at_ < head_.size()) {
    const std::size_t take = std::min(n, head_.size() - at_);
    std::memcpy(out, head_.data() + at_, take);
    at_ += take;
    return take;
  }
  return rest_.read(out, n);
}

std::uint64_t PrefixedReader::skip_some(std::uint64_t n) {
  const std::size_t in_head =
      static_cast<std::size_t>(std::min<std::uint64_t>(n, head_.size() - at_));
  at_ += in_head;
  return in_head + (n > in_head ? rest_.skip(n - in_head) : 0);
}

FileReader::FileReader(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0)
    throw InputError(path + ": cannot read: " + std::strerror(errno));
  size_ = static_cast<std::uint64_t>(st.st_size);
}

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t FileReader::read_some(char* out, std::size_t n) {
  const std::size_t got = read_at(offset_, out, n);
  offset_ += got;
  return got;
}

std::size_t FileReader::read_at(std::uint64_t offset, char* out, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (got == 0) break;
    if (got > 0) {
      done += static_cast<std::size_t>(got);
    } else if (errno != EINTR) {
      throw InputError(path_ + ": read failed: " + std::strerror(errno));
    }
  }
  return done;
}

std::uint64_t FileReader::skip_some(std::uint64_t n) {
  const std::uint64_t take = std::min(n, size_ > offset_ ? size_ - offset_ : 0);
  offset_ += take;
  return take;
}

}  // namespace imgsmith
