// Small string helpers shared by the parsers (sizes, .dive-ci, Python
// requirements, HTTP headers), and the escaping of file names in reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imgsmith {

// Without leading and trailing whitespace: a view into `s`, so keep `s` alive.
std::string_view trim(std::string_view s);
// ASCII lower case.
std::string to_lower(std::string_view s);
// The pieces between each `sep` ("a,,b" -> {"a", "", "b"}).
std::vector<std::string> split(const std::string& s, const std::string& sep);
std::string join(const std::vector<std::string>& parts, const std::string& sep);
// "./usr//lib/" -> "usr/lib"; "." and "/" -> "". ".." never climbs above the root.
std::string normalise_path(std::string_view raw);
// Whether normalise_path would return `p` as it is (most tar names).
bool is_normal_path(std::string_view p);
// What is before the last '/' ("" without one), and what is after it: views
// into `p`.
inline std::string_view dirname_of(std::string_view p) {
  const auto slash = p.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : p.substr(0, slash);
}
inline std::string_view basename_of(std::string_view p) {
  const auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

// File names are bytes: these keep them safe in reports.
//
// True when `s` is valid UTF-8 (no overlong forms, no surrogates, nothing
// past U+10FFFF). ASCII is checked eight bytes at a time.
bool is_valid_utf8(std::string_view s);
// `s` made valid UTF-8 for JSON: each byte that is not part of a valid
// sequence becomes U+FFFD. Valid input comes back unchanged.
std::string utf8_replaced(std::string_view s);
// Lower-case hex of the raw bytes ("\xe9t" -> "e974"), and back (nullopt
// for an odd length or a non-hex digit).
std::string to_hex(std::string_view s);
std::optional<std::string> from_hex(std::string_view hex);
// `s` for a terminal, a table or XML: never a raw control character or an
// invalid byte. \n \r \t stay readable as those two characters; other C0
// controls, DEL and invalid UTF-8 bytes become \xNN (ESC is \x1b); C1
// controls, the bidirectional controls (U+202A..E, U+2066..9, LRM, RLM,
// ALM), zero-width and invisible characters (U+200B..D, U+2060..4, U+FEFF,
// soft hyphen), U+2028/9 and U+FFFE/F become \u{NNNN}. Everything else,
// backslashes included, is kept. An ASCII name without controls comes back
// as it is, after one scan.
std::string visible(std::string_view s);
// True when visible(s) would change `s`.
bool needs_escape(std::string_view s);
// At most `max` bytes of valid UTF-8 `s`, cut at a character boundary, the
// last three bytes "..." when it was cut.
std::string shorten(std::string_view s, std::size_t max);

// A layer's created_by as the Dockerfile step a reader recognises:
// "/bin/sh -c #(nop) COPY ..." -> "COPY ...", "/bin/sh -c X" and BuildKit's
// "RUN /bin/sh -c X # buildkit" or "|2 A=b /bin/sh -c X" -> "RUN X", with
// newlines and tabs folded to spaces. Not escaped: callers escape for their
// output.
std::string dockerfile_step(std::string_view created_by);

// The candidate closest to `word` by edit distance (case-insensitive), for
// "did you mean": nullopt when none is near enough (more than a third of
// the word's letters, at least 2, would have to change).
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// Standard base64 (RFC 4648); decoding also takes the URL-safe alphabet and
// ignores padding and line breaks. Throws std::invalid_argument on other bytes.
std::string base64_encode(const std::string& in);
std::string base64_decode(const std::string& in);

}  // namespace imgsmith
