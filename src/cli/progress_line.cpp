#include "progress_line.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>

#include "imgsmith/util/error.hpp"

namespace imgsmith {

ProgressMode parse_progress_mode(const std::string& text) {
  if (text == "auto") return ProgressMode::Auto;
  if (text == "always") return ProgressMode::Always;
  if (text == "never") return ProgressMode::Never;
  throw InputError("--progress '" + text + "': one of auto, always, never");
}

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ProgressLine::ProgressLine(ProgressMode mode)
    : enabled_(mode == ProgressMode::Always ||
               (mode == ProgressMode::Auto && ::isatty(STDERR_FILENO) != 0)),
      terminal_(::isatty(STDERR_FILENO) != 0) {}
ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::show(const std::string& text) {
  if (!enabled_ || text == last_text_) return;
  last_text_ = text;
  if (terminal_) {
    // Redrawn in place; cut to the terminal's usual width so it never wraps.
    std::cerr << "\r\033[Kimgsmith: " << text.substr(0, 110) << std::flush;
    shown_ = true;
    return;
  }
  // A log gets a line a second at most.
  const double now = seconds_now();
  if (last_line_ >= 0 && now - last_line_ < 1.0) return;
  last_line_ = now;
  std::cerr << "imgsmith: " << text << "\n" << std::flush;
}

void ProgressLine::clear() {
  if (shown_) std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace imgsmith
