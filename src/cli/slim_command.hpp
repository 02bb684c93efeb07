#pragma once

#include <CLI/CLI.hpp>

namespace imgsmith {

// Registers `imgsmith slim` on `app`; `exit_code` receives its status.
void register_slim_command(CLI::App& app, int& exit_code);

}  // namespace imgsmith
