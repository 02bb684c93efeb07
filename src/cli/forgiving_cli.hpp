// Mistakes on the command line answered with what was meant: a misspelt
// command or option gets "did you mean", `-o json` is refused with the
// flag that was meant, and every parser error starts with "imgsmith: error:".
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace imgsmith {

// Parser errors in one line with the prefix every other error has, then
// where help is. Set before the subcommands are added (they copy it).
void use_one_error_prefix(CLI::App& app);

// After a parse failed: the message for a command or a long option that
// does not exist, with the nearest one that does ("'analyz' is not a
// command; did you mean 'imgsmith analyze'?"); nullopt when the failure
// was another one.
std::optional<std::string> misspelled(const CLI::App& app, int argc, char** argv);

// A check for -o/--output: a value that names a report format and no file
// there is refused, since `-o json` (other tools' habit) meant --format.
CLI::Validator output_is_a_file();

}  // namespace imgsmith
