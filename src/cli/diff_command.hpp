#pragma once

#include <CLI/CLI.hpp>

namespace imgsmith {

// Registers `imgsmith diff` on `app`; `exit_code` receives its status.
void register_diff_command(CLI::App& app, int& exit_code);

}  // namespace imgsmith
