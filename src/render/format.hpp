// Formatting the text, Markdown and JUnit renderers share (internal to
// src/render).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <variant>

#include "imgsmith/size.hpp"

namespace imgsmith::render_detail {

// 123 of 1000 -> "12.3%".
inline std::string percent(std::uint64_t part, std::uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

// A gate's limit or actual value: "1,000,000 B" or "0.9".
inline std::string gate_value(const std::variant<std::uint64_t, double>& v) {
  if (std::holds_alternative<std::uint64_t>(v)) return format_count(std::get<std::uint64_t>(v)) + " B";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", std::get<double>(v));
  return buf;
}

}  // namespace imgsmith::render_detail
