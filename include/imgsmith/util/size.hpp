// Parsing and formatting of byte sizes. Everything inside imgsmith counts
// bytes as std::uint64_t; only renderers turn them into "1.2 GB".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace imgsmith {

// Parses "1234", "20MB", "20Mb", "1.5GiB", "4 kB".
// Units are case-insensitive; a trailing "b"/"B" always means bytes (as in
// dive and Docker, "20Mb" is 20 megabytes, not megabits).
//   K, KB, M, MB, G, GB, T, TB      powers of 1000
//   Ki, KiB, Mi, MiB, Gi, GiB, ...  powers of 1024
// Returns nullopt for anything else (negative, empty, unknown unit, overflow).
std::optional<std::uint64_t> parse_size(std::string_view text);

// "10%" -> 10.0; nullopt when the text is not a percentage in [0, 100].
std::optional<double> parse_percent(std::string_view text);

// 1220598 -> "1.22 MB" (decimal units, as docker and dive print them).
std::string format_size(std::uint64_t bytes);

// 1220598 -> "1,220,598".
std::string format_count(std::uint64_t n);

}  // namespace imgsmith
