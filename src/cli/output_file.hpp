// A report's output: its format, and writing it so that a reader never
// sees half of it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace imgsmith {

// Writes `content` to `path` ("-" is standard output). A regular file is
// written beside its target and renamed over it, so an error leaves the old
// file (or none) in place; a device or pipe (/dev/null, /dev/stdout) is
// written directly. Throws OutputError naming the path when a write
// fails, InputError when the file cannot be created.
void write_output(const std::string& path, const std::string& content);
// Flushes std::cout and throws OutputError when any write to it failed
// (a full disk, /dev/full, a pipe closed early), so a report that did not
// arrive is never a success.
void check_standard_output();

// --format on `command`: the choices and their help come from the renderer
// table (renderers.hpp); a name that is no format, or a format that cannot
// render a diff (`for_diff`), is refused before anything is read.
CLI::Option* add_format_option(CLI::App& command, std::string& format, bool for_diff);

// --report FORMAT=FILE (repeatable): more reports of the same run, each
// in its format to its file, e.g. markdown for a comment and html and json
// to keep. Checked like --format before anything is read.
struct ExtraReport {
  std::string format, path;
};
CLI::Option* add_report_option(CLI::App& command, std::vector<std::string>& reports, bool for_diff);
// The --report values split; throws InputError for one without '='.
std::vector<ExtraReport> extra_reports(const std::vector<std::string>& reports);

}  // namespace imgsmith
