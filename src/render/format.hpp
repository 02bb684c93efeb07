// Formatting the renderers share (internal to src/render).
#pragma once

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "imgsmith/util/size.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::render_detail {

// printf into a string: one table row or line of a report.
inline std::string fmt(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// Text for HTML or XML, where it can be neither markup nor close a quoted
// attribute.
inline std::string escape_markup(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// 123 of 1000 -> "12.3%".
inline std::string percent(std::uint64_t part, std::uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

// A gate's limit or actual value: "1,000,000 B" or "0.9".
inline std::string gate_value(const std::variant<std::uint64_t, double>& v) {
  if (std::holds_alternative<std::uint64_t>(v))
    return format_count(std::get<std::uint64_t>(v)) + " B";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", std::get<double>(v));
  return buf;
}

// A gate's limit or actual value as a JSON number, as it was given.
template <class... T>
nlohmann::json json_number(const std::variant<T...>& v) {
  return std::visit([](auto x) { return nlohmann::json(x); }, v);
}

// A growth: "+1.23 MB", "-4.00 kB".
inline std::string signed_size(std::int64_t delta) {
  const std::uint64_t magnitude =
      delta < 0 ? static_cast<std::uint64_t>(-delta) : static_cast<std::uint64_t>(delta);
  return (delta < 0 ? "-" : "+") + format_size(magnitude);
}

// A growth from `a` to `b` in percent of `a`: "+7.7%", "new" from nothing.
// Ten times as large or more is said as a factor ("x434,783"): a 23-byte
// file grown to 10 MB is not usefully "+43478260.9%".
inline std::string growth_percent(std::uint64_t a, std::uint64_t b) {
  char buf[48];
  if (a == 0) return b == 0 ? "0.0%" : "new";
  const double ratio = static_cast<double>(b) / static_cast<double>(a);
  if (ratio >= 10.0) {
    std::snprintf(buf, sizeof buf, "%.0f", ratio);
    std::string digits = buf, grouped;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
      grouped += digits[i];
    }
    return "x" + grouped;
  }
  std::snprintf(buf, sizeof buf, "%+.1f%%",
                100.0 * (static_cast<double>(b) - static_cast<double>(a)) / static_cast<double>(a));
  return buf;
}

// A Markdown table cell: no bare pipe, newline or markup (a created_by of
// `RUN ./*script*` shows its asterisks, not emphasis); image strings never
// hold a raw control character (visible() escapes them).
inline std::string cell(const std::string& s) {
  std::string out;
  for (char c : visible(s)) {
    if (c == '<')
      out += "&lt;";
    else if (c == '&')
      out += "&amp;";
    else if (std::string_view("|\\`*_[]~").find(c) != std::string_view::npos)
      out.append(1, '\\').push_back(c);
    else
      out.push_back(c);
  }
  return out;
}

}  // namespace imgsmith::render_detail
