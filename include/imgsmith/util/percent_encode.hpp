// Percent-encoding (RFC 3986 section 2.1): every byte but the unreserved
// characters (letters, digits, "-._~") as %XX with upper-case hex digits.
// Token requests' form and query values and package URLs both use it;
// a package URL also keeps ':' (`also_kept`).
#pragma once

#include <string>
#include <string_view>

namespace imgsmith {

inline std::string percent_encode(std::string_view s, std::string_view also_kept = "") {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const unsigned char c : s) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                            c == '~' ||
                            also_kept.find(static_cast<char>(c)) != std::string_view::npos;
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace imgsmith
