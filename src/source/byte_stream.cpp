#include "imgsmith/source/byte_stream.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

#include "imgsmith/source/file_io.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith {
namespace {

// Mapped files that another process may shrink while they are read. A
// load past the file's new end raises SIGBUS; the handler maps a page of
// zeros over the faulting page, marks the mapping and lets the load go on.
// The reader then meets zeros (an end of archive, a damaged header) and
// SharedFile::check_unchanged() says what happened, where the process
// would have died. The table is fixed and lock-free: a signal handler may
// not take locks or allocate.
struct GuardedMapping {
  std::atomic<std::uintptr_t> begin{0}, end{0};
  std::atomic<bool> faulted{false};
};
constexpr int kGuardedMappings = 256;
GuardedMapping guarded[kGuardedMappings];
struct sigaction previous_bus_action {};
std::once_flag bus_handler_once;
std::uintptr_t page_bytes = 4096;
// An entry is free at begin 0 and reserved at begin 1 (the handler skips
// both); it is filled end first, so the handler never pairs a begin with
// another mapping's end, and emptied end first (release_mapping).
constexpr std::uintptr_t kReserved = 1;

void on_bus_error(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (GuardedMapping& g : guarded) {
    const std::uintptr_t begin = g.begin.load(std::memory_order_acquire);
    if (begin <= kReserved || address < begin || address >= g.end.load(std::memory_order_acquire))
      continue;
    void* page = reinterpret_cast<void*>(address / page_bytes * page_bytes);
    if (::mmap(page, page_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
        MAP_FAILED) {
      g.faulted.store(true, std::memory_order_release);
      return;  // the load runs again and reads zeros
    }
    break;
  }
  // Not a guarded mapping: whatever handled SIGBUS before (by default the
  // process ends, as it would have without us).
  if ((previous_bus_action.sa_flags & SA_SIGINFO) != 0 &&
      previous_bus_action.sa_sigaction != nullptr) {
    previous_bus_action.sa_sigaction(signal, info, context);
    return;
  }
  if (previous_bus_action.sa_handler != SIG_DFL && previous_bus_action.sa_handler != SIG_IGN &&
      previous_bus_action.sa_handler != nullptr) {
    previous_bus_action.sa_handler(signal);
    return;
  }
  ::signal(SIGBUS, SIG_DFL);  // the faulting load runs again and ends the process
}

void install_bus_handler() {
  std::call_once(bus_handler_once, [] {
    page_bytes = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = on_bus_error;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &previous_bus_action);
  });
}

// A free entry for [begin, end), or -1 when all are taken (the file is
// then read with pread instead of mapped).
int guard_mapping(const char* begin, std::size_t size) {
  for (int i = 0; i < kGuardedMappings; ++i) {
    std::uintptr_t free = 0;
    if (!guarded[i].begin.compare_exchange_strong(free, kReserved)) continue;
    const auto at = reinterpret_cast<std::uintptr_t>(begin);
    guarded[i].faulted.store(false);
    guarded[i].end.store(at + size, std::memory_order_release);
    guarded[i].begin.store(at, std::memory_order_release);
    return i;
  }
  return -1;
}

void release_mapping(int slot) {
  guarded[slot].end.store(0, std::memory_order_release);
  guarded[slot].begin.store(0, std::memory_order_release);
}

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace

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
  mtime_ns_ = mtime_ns(st);
}

SharedFile::~SharedFile() {
  if (guard_slot_ >= 0) release_mapping(guard_slot_);
  if (map_ != nullptr) ::munmap(const_cast<char*>(map_), static_cast<std::size_t>(size_));
  if (fd_ >= 0) ::close(fd_);
}

const char* SharedFile::mapped() const {
  std::call_once(map_once_, [this] {
    if (size_ == 0 || size_ > std::numeric_limits<std::size_t>::max()) return;
    install_bus_handler();
    void* p = ::mmap(nullptr, static_cast<std::size_t>(size_), PROT_READ, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return;
    guard_slot_ = guard_mapping(static_cast<const char*>(p), static_cast<std::size_t>(size_));
    if (guard_slot_ < 0) {  // every entry taken: pread instead
      ::munmap(p, static_cast<std::size_t>(size_));
      return;
    }
    map_ = static_cast<const char*>(p);
  });
  return map_;
}

void SharedFile::check_unchanged() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0)
    throw InputError(path_ + ": cannot check the file after reading it: " + std::strerror(errno));
  const bool faulted = guard_slot_ >= 0 && guarded[guard_slot_].faulted.load();
  const auto now = static_cast<std::uint64_t>(st.st_size);
  if (!faulted && now == size_ && mtime_ns(st) == mtime_ns_) return;
  const std::string how =
      now != size_ ? "it was " + std::to_string(size_) + " bytes and is now " + std::to_string(now)
                   : std::string("it was rewritten");
  throw InputError(path_ + ": changed while it was read (" + how +
                   "); wait until whatever writes it has finished, or read a copy");
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
  // Short before the end the file had when it was opened: it shrank.
  if (done < size && offset + done < size_) check_unchanged();
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
