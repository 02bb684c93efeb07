// Memory for the analysis's large structures (the merged tree, its index,
// the layers' entry lists), taken from the kernel in 2 MiB-aligned pieces
// marked for transparent huge pages. A merge of 100,000 paths touches tens
// of MiB; in 4 KiB pages every first touch is a page fault, and those cost
// a quarter of the run. Where the kernel gives no huge pages the advice is
// ignored and this is plain mmap.
#pragma once

#include <memory_resource>

namespace imgsmith {

// Process-wide and thread-safe. Requests under 1 MiB go to the default
// allocator: huge pages pay only for large, densely used blocks.
std::pmr::memory_resource* bulk_memory();

}  // namespace imgsmith
