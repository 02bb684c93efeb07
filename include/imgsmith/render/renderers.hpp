// The output formats: one table for analyze and diff. A format is a name, a
// line that says what it writes, the function that renders a report and the
// one that renders a diff (absent where the format has nothing to say about
// a diff). Each format lives in its own file in src/render; adding one is
// that file and its row in src/render/renderers.cpp. The commands' --format
// choices and help come from here.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "imgsmith/diff/diff.hpp"
#include "imgsmith/report/report.hpp"

namespace imgsmith {

struct Renderer {
  std::string name;
  std::string description;
  void (*analysis)(const Report& report, std::ostream& out) = nullptr;
  void (*diff)(const DiffReport& diff, std::ostream& out) = nullptr;  // null: not for diff
  // It shows every visible file (Report::files), which the analysis then
  // keeps; the other formats let each file go once it is counted.
  bool needs_files = false;
};

// Every format, in the order help lists them; the first is the default.
const std::vector<Renderer>& renderers();

// Why `format` cannot render an analysis (for_diff false) or a diff: not a
// format, or not one for diffs. Empty when it can.
std::string format_error(std::string_view format, bool for_diff);
// The formats for --format's help, one a line: "  text      a table ...".
std::string format_help(bool for_diff);

// Whether `format` shows every file (false for a format that is not one).
bool renderer_needs_files(std::string_view format);

// Renders in `format`; throws InputError with format_error()'s message.
void render_analysis(std::string_view format, const Report& report, std::ostream& out);
void render_diff(std::string_view format, const DiffReport& diff, std::ostream& out);

}  // namespace imgsmith
