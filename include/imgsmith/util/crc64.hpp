// CRC-64 with the ISO 3309 polynomial, as Go's hash/crc64 computes it
// (crc64.MakeTable(crc64.ISO): reflected, initial value and final XOR all
// ones): the checksum tar-split keeps for each file of a layer, which the
// daemon's storage is checked against when a layer is read in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace imgsmith {

class Crc64Iso {
 public:
  void update(const void* data, std::size_t size);
  std::uint64_t value() const { return ~state_; }

 private:
  std::uint64_t state_ = ~std::uint64_t{0};
};

std::uint64_t crc64_iso(std::string_view bytes);

}  // namespace imgsmith
