#include "imgsmith/util/bulk_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <new>

namespace imgsmith {
namespace {

constexpr std::size_t kHugePage = 2u << 20;
constexpr std::size_t kSmall = 1u << 20;

std::size_t round_up(std::size_t n) { return (n + kHugePage - 1) / kHugePage * kHugePage; }

class BulkMemory final : public std::pmr::memory_resource {
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (bytes < kSmall || alignment > kHugePage)
      return std::pmr::new_delete_resource()->allocate(bytes, alignment);
    // Over-allocate by a huge page so an aligned block fits, then return the
    // slack: a huge page needs a 2 MiB-aligned virtual address.
    const std::size_t size = round_up(bytes);
    void* raw = ::mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > start) ::munmap(raw, aligned - start);
    const std::size_t tail = (start + size + kHugePage) - (aligned + size);
    if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + size), tail);
    ::madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // advice only
    return reinterpret_cast<void*>(aligned);
  }

  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    if (bytes < kSmall || alignment > kHugePage) {
      std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
      return;
    }
    ::munmap(p, round_up(bytes));
  }

  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

}  // namespace

std::pmr::memory_resource* bulk_memory() {
  static BulkMemory resource;
  return &resource;
}

}  // namespace imgsmith

namespace imgsmith {

GrowingRegion::GrowingRegion(std::size_t max_bytes) {
  // PROT_NONE and MAP_NORESERVE: address space only, no commit charge. A
  // limit on address space (ulimit -v) may refuse a large reservation:
  // then a smaller one, down to 64 MiB.
  for (std::size_t want = round_up(max_bytes); want >= (64u << 20); want /= 2) {
    void* raw = ::mmap(nullptr, want + kHugePage, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) continue;
    mapping_ = raw;
    mapping_size_ = want + kHugePage;
    const auto start = reinterpret_cast<std::uintptr_t>(raw);
    base_ = reinterpret_cast<char*>((start + kHugePage - 1) / kHugePage * kHugePage);
    reserved_ = want;
    return;
  }
  throw std::bad_alloc();
}

GrowingRegion::~GrowingRegion() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
}

void* GrowingRegion::extend(std::size_t bytes, std::size_t align) {
  const std::size_t at = (used_ + align - 1) / align * align;
  if (at > reserved_ || bytes > reserved_ - at) return nullptr;
  if (at + bytes > committed_) {
    // Committed in huge-page steps: one system call per 2 MiB at most.
    const std::size_t upto = std::min(reserved_, round_up(at + bytes));
    if (::mprotect(base_ + committed_, upto - committed_, PROT_READ | PROT_WRITE) != 0)
      throw std::bad_alloc();
    // Huge pages from the second 2 MiB on: the first touch of a huge page
    // zeroes all 2 MiB of it, which a small image (most of them use a few
    // KiB of each region) would pay for every region, a millisecond or more
    // of a run that otherwise takes a few.
    if (committed_ > 0)
      ::madvise(base_ + committed_, upto - committed_, MADV_HUGEPAGE);  // advice only
    committed_ = upto;
  }
  used_ = at + bytes;
  return base_ + at;
}

}  // namespace imgsmith
