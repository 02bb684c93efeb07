// --limit NAME=VALUE: raises (or lowers) one of the caps on what imgsmith
// reads from an image (imgsmith/source/limits.hpp), for analyze and diff.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace imgsmith {

// The option, its help listing every limit with its default; each value is
// checked when parsed, so a wrong name or value is refused before anything
// is read.
CLI::Option* add_limit_option(CLI::App& command, std::vector<std::string>& limits);

// Sets the process's limits: the defaults with each NAME=VALUE applied.
// Throws InputError on a wrong one.
void apply_limit_options(const std::vector<std::string>& limits);

}  // namespace imgsmith
