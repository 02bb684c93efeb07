// What the fuzz targets share: a byte stream that hands its input out in
// chunk sizes the fuzzer picks (archive bugs cluster at chunk boundaries),
// a ustar writer for generated layouts, and a scratch directory.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "imgsmith/source/byte_stream.hpp"
#include "piece_stream.hpp"
#include "tar_header.hpp"

namespace fuzz {

// Reads `data` in chunks whose sizes cycle through `chunks` (each 1..);
// `in_memory`: lent and skipped as from a mapped file, too.
inline imgsmith::testing::PieceStream chunked(std::string_view data,
                                              std::vector<std::size_t> chunks,
                                              bool in_memory = false) {
  if (chunks.empty()) chunks.push_back(4096);
  return imgsmith::testing::PieceStream(
      data,
      [chunks = std::move(chunks), next = std::size_t{0}]() mutable {
        return chunks[next++ % chunks.size()];
      },
      in_memory);
}

// A ustar archive of (name, content) pairs, as docker save and OCI archives are.
inline std::string ustar(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string out;
  for (const auto& [name, content] : files) {
    char size[12] = {};
    std::snprintf(size, sizeof size, "%011llo", static_cast<unsigned long long>(content.size()));
    out += imgsmith::testing::tar_header(name, size);
    out += content;
    out.append((512 - content.size() % 512) % 512, '\0');
  }
  out.append(1024, '\0');
  return out;
}

// A directory of its own for the target's files, removed at exit.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    char tmpl[] = "/tmp/imgsmith-fuzz-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    return std::filesystem::path(made != nullptr ? made : "/tmp");
  }();
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup;
  return dir;
}

inline void write_file(const std::filesystem::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

}  // namespace fuzz
