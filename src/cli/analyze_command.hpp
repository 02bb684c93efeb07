#pragma once

#include <CLI/CLI.hpp>

namespace imgsmith {

// Registers `imgsmith analyze` on `app`; `exit_code` receives its status.
void register_analyze_command(CLI::App& app, int& exit_code);

}  // namespace imgsmith
