// The module information compilers embed in executables, read from an ELF
// file as its layer streams past: Go's build info (the main module's path
// and version) and cargo auditable's dependency list (the root package's
// name and version), whose program is then attributed to that package
// (data/binary-packages.json "binaries").
#pragma once

#include <any>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "imgsmith/util/forward_reader.hpp"

namespace imgsmith {

struct BinaryModule {
  std::string installer;  // "go", "cargo"
  std::string package;    // "github.com/prometheus/prometheus", "ripgrep"
  std::string version;    // "v2.48.0", "14.1.0"; "" where the binary does not say
  std::string toolchain;  // "go1.21.5" (Go); ""
};

// The main module of Go build info: the bytes of .go.buildinfo, or of a Go
// binary's first writable segment, which start at `file_offset` in the file
// (the header is at a 16-aligned offset of the file). Go 1.18's inline form
// only: the older form points into the data segment. None when the bytes
// hold no such header, or a malformed one.
std::optional<BinaryModule> parse_go_buildinfo(std::string_view data,
                                               std::uint64_t file_offset = 0);

// The root package of cargo auditable's section (.dep-v0: zlib-compressed
// JSON). None when it does not inflate, is no such JSON, inflates past
// `max_json` bytes or names no root.
std::optional<BinaryModule> parse_cargo_auditable(std::string_view compressed,
                                                  std::size_t max_json = 8u << 20);

// Reads the module information of the file whose first bytes are `head`
// (64 or more) and whose rest is `rest` (`size` bytes in all). A 64-bit
// little-endian ELF executable or shared object only. Where `rest` reads
// at offsets (ForwardReader::reads_at), the section table names
// .go.buildinfo and .dep-v0 and only those are read, leaving `rest` where
// it is. Read front to back, only Go's is found: a file whose head shows
// Go's build ID note is read on to its first writable segment (Go's own
// fallback when there is no section table); any other file is left as it
// is. Never throws on bad content.
std::optional<BinaryModule> inspect_binary_module(std::string_view head, ForwardReader& rest,
                                                  std::uint64_t size);

}  // namespace imgsmith
