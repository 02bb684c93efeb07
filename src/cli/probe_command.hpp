#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace imgsmith {

// Lists `imgsmith probe` in the help of `app`.
void register_probe_command(CLI::App& app);

// `imgsmith probe ARGS...`: runs the embedded probe with ARGS, or writes it
// out with --write PATH. Throws InputError.
int probe_main(int argc, char** argv);

// The probe binary this imgsmith carries.
std::string embedded_probe();

}  // namespace imgsmith
