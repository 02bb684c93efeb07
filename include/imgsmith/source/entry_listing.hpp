// A layer's listing as one digest: what its entries are (type, path, size,
// link target), whatever their order and whatever their bytes' timestamps.
// Two layers with the same listing hold the same files by name and size:
// the same build run again (other mtimes, so another diff_id), or content
// changed at the same size. diff uses it to tell a rebuilt layer from an
// added one; it never stands for the same content.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace imgsmith {

class EntryListing {
 public:
  // One entry: its type (EntryType's value), normalised path, content bytes
  // and link target.
  void add(std::uint8_t type, std::string_view path, std::uint64_t size, std::string_view link);
  // "listing:" and 32 hex digits: two 64-bit hashes of each entry, summed,
  // so the order of the entries does not count; "" for a layer of no entries.
  std::string digest() const;

 private:
  std::uint64_t sums_[2] = {0, 0};
  std::uint64_t count_ = 0;
};

}  // namespace imgsmith
