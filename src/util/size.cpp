#include "imgsmith/util/size.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "imgsmith/util/text.hpp"

namespace imgsmith {
namespace {

std::optional<long double> unit_multiplier(const std::string& unit) {
  struct Unit {
    const char* name;
    long double factor;
  };
  static constexpr long double k = 1000.0L;
  static constexpr long double ki = 1024.0L;
  static const Unit units[] = {
      {"", 1},
      {"b", 1},
      {"k", k},
      {"kb", k},
      {"m", k * k},
      {"mb", k * k},
      {"g", k * k * k},
      {"gb", k * k * k},
      {"t", k * k * k * k},
      {"tb", k * k * k * k},
      {"ki", ki},
      {"kib", ki},
      {"mi", ki * ki},
      {"mib", ki * ki},
      {"gi", ki * ki * ki},
      {"gib", ki * ki * ki},
      {"ti", ki * ki * ki * ki},
      {"tib", ki * ki * ki * ki},
  };
  for (const auto& u : units)
    if (unit == u.name) return u.factor;
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  text = trim(text);
  std::size_t i = 0;
  bool seen_digit = false, seen_dot = false;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || (text[i] == '.' && !seen_dot))) {
    if (text[i] == '.')
      seen_dot = true;
    else
      seen_digit = true;
    ++i;
  }
  if (!seen_digit) return std::nullopt;
  const std::string number(text.substr(0, i));
  const auto factor = unit_multiplier(to_lower(trim(text.substr(i))));
  if (!factor) return std::nullopt;
  const long double value = std::stold(number) * *factor;
  // 2^64 is not representable as uint64_t; reject at or above it.
  if (!std::isfinite(value) || value >= 18446744073709551616.0L) return std::nullopt;
  return static_cast<std::uint64_t>(value);
}

std::optional<double> parse_percent(std::string_view text) {
  text = trim(text);
  if (text.empty() || text.back() != '%') return std::nullopt;
  text.remove_suffix(1);
  text = trim(text);
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(std::string(text), &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !(value >= 0 && value <= 100)) return std::nullopt;
  return value;
}

std::string format_size(std::uint64_t bytes) {
  static const char* const units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1000) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 999.995 && unit < 6) {
    value /= 1000.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", value, units[unit]);
  return buf;
}

std::string format_count(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace imgsmith
