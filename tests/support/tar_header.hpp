// One ustar header block, written by hand: for tests and fuzz targets that
// need headers no archiver writes (a base-256 size, a lying size).
#pragma once

#include <cstdio>
#include <cstring>
#include <string>

namespace imgsmith::testing {

// A regular file's 512-byte header; `size` is the 12-byte size field as
// given (octal text, or GNU base-256 with the top bit set), the checksum
// computed over the result.
inline std::string tar_header(const std::string& name, const char (&size)[12]) {
  char h[512] = {};
  std::snprintf(h, 100, "%s", name.substr(0, 99).c_str());
  std::memcpy(h + 100, "0000644", 8);
  std::memcpy(h + 108, "0000000", 8);
  std::memcpy(h + 116, "0000000", 8);
  std::memcpy(h + 124, size, 12);
  std::memcpy(h + 136, "00000000000", 12);
  h[156] = '0';
  std::memcpy(h + 257,
              "ustar\0"
              "00",
              8);
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (const unsigned char c : h) sum += c;
  std::snprintf(h + 148, 8, "%06o", sum);
  return std::string(h, 512);
}

}  // namespace imgsmith::testing
