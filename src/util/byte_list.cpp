#include "imgsmith/util/byte_list.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "imgsmith/util/error.hpp"

namespace imgsmith {
namespace {

std::string temporary_directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

// A file nobody else can open, gone when closed: -1 when none can be made.
int unlinked_temporary_file() {
  std::string name = temporary_directory() + "/imgsmith-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd >= 0) ::unlink(name.c_str());
  return fd;
}

}  // namespace

ByteList::ByteList(ByteList&& other) noexcept
    : blocks_(std::move(other.blocks_)),
      size_(std::exchange(other.size_, 0)),
      spilled_(std::exchange(other.spilled_, 0)),
      fd_(std::exchange(other.fd_, -1)),
      no_file_(other.no_file_) {}

ByteList& ByteList::operator=(ByteList&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    blocks_ = std::move(other.blocks_);
    size_ = std::exchange(other.size_, 0);
    spilled_ = std::exchange(other.spilled_, 0);
    fd_ = std::exchange(other.fd_, -1);
    no_file_ = other.no_file_;
  }
  return *this;
}

ByteList::~ByteList() {
  if (fd_ >= 0) ::close(fd_);
}

void ByteList::append(const char* data, std::size_t n) {
  while (n > 0) {
    const std::size_t kept = size_ - spilled_;
    if (kept % kBlock == 0 && kept / kBlock == blocks_.size()) {  // no room left in memory
      if (kept >= kSpillAt || (spilled_ > 0 && kept > 0)) spill();
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlock));
    }
    const std::size_t at = (size_ - spilled_) % kBlock, take = std::min(n, kBlock - at);
    std::memcpy(blocks_.back().get() + at, data, take);
    size_ += take;
    data += take;
    n -= take;
  }
}

// Moves the blocks kept, all full, to the file.
void ByteList::spill() {
  if (no_file_) return;
  if (fd_ < 0 && (fd_ = unlinked_temporary_file()) < 0) {
    no_file_ = true;
    return;
  }
  for (const auto& block : blocks_) {
    for (std::size_t done = 0; done < kBlock;) {
      const ssize_t wrote =
          ::pwrite(fd_, block.get() + done, kBlock - done, static_cast<off_t>(spilled_ + done));
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0)
        throw InputError("a temporary file in " + temporary_directory() + ": " +
                         std::strerror(wrote < 0 ? errno : ENOSPC) +
                         "; set TMPDIR to a directory with room");
      done += static_cast<std::size_t>(wrote);
    }
    spilled_ += kBlock;
  }
  blocks_.clear();
}

void ByteList::Reader::read(std::size_t n, std::string& out) {
  while (n > 0 && pos_ < list_->spilled_) {
    out.push_back(spilled_byte());
    --n;
  }
  while (n > 0) {
    const std::size_t at = pos_ - list_->spilled_;
    const std::size_t take = std::min(n, kBlock - at % kBlock);
    out.append(list_->blocks_[at / kBlock].get() + at % kBlock, take);
    pos_ += take;
    n -= take;
  }
}

char ByteList::Reader::spilled_byte() {
  if (pos_ < buffer_start_ || pos_ >= buffer_start_ + buffer_size_) fill();
  return buffer_[pos_++ - buffer_start_];
}

void ByteList::Reader::fill() {
  if (!buffer_) buffer_ = std::make_unique_for_overwrite<char[]>(kBuffer);
  const std::size_t want = std::min(kBuffer, list_->spilled_ - pos_);
  std::size_t got = 0;
  while (got < want) {
    const ssize_t n =
        ::pread(list_->fd_, buffer_.get() + got, want - got, static_cast<off_t>(pos_ + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw InputError(std::string("reading back a temporary file: ") +
                       (n < 0 ? std::strerror(errno) : "it is shorter than was written"));
    got += static_cast<std::size_t>(n);
  }
  buffer_start_ = pos_;
  buffer_size_ = got;
}

}  // namespace imgsmith
