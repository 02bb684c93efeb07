// Memory for the analysis's large structures (the merged tree, its index,
// the layers' entry lists), taken from the kernel in 2 MiB-aligned pieces
// marked for transparent huge pages. A merge of 100,000 paths touches tens
// of MiB; in 4 KiB pages every first touch is a page fault, and those cost
// a quarter of the run. Where the kernel gives no huge pages the advice is
// ignored and this is plain mmap.
#pragma once

#include <cstddef>
#include <memory_resource>

namespace imgsmith {

// Process-wide and thread-safe. Requests under 1 MiB go to the default
// allocator: huge pages pay only for large, densely used blocks.
std::pmr::memory_resource* bulk_memory();

// Address space reserved once and committed as it fills, so that nothing
// placed in it ever moves: the merged tree's nodes point at one another by
// 32-bit offsets from themselves, which needs every node within 8 GiB of
// every other and no reallocation that copies (a doubling vector holds old
// and new at once, half again its size). Reserved pages that are never
// written cost no memory. Not thread-safe.
class GrowingRegion {
 public:
  // Reserves up to `max_bytes` of address space, less where the system
  // refuses that much (a limit on address space): capacity() says.
  explicit GrowingRegion(std::size_t max_bytes);
  ~GrowingRegion();
  GrowingRegion(const GrowingRegion&) = delete;
  GrowingRegion& operator=(const GrowingRegion&) = delete;

  // `bytes` more at the end, zeroed, at an offset that is a multiple of
  // `align` (at most 4096); nullptr when the region is full. Throws
  // std::bad_alloc when the memory cannot be committed.
  void* extend(std::size_t bytes, std::size_t align);
  char* base() const { return base_; }
  std::size_t used() const { return used_; }
  std::size_t capacity() const { return reserved_; }

 private:
  char* base_ = nullptr;
  std::size_t reserved_ = 0;   // usable bytes from base_
  std::size_t committed_ = 0;  // readable and writable from base_
  std::size_t used_ = 0;
  void* mapping_ = nullptr;  // what munmap gets back
  std::size_t mapping_size_ = 0;
};

}  // namespace imgsmith
