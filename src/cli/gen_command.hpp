#pragma once

#include <CLI/CLI.hpp>

namespace imgsmith {

// Registers `imgsmith gen`; the exit status lands in `exit_code`.
void register_gen_command(CLI::App& app, int& exit_code);

}  // namespace imgsmith
