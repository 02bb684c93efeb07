#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace imgsmith {

// Lists `imgsmith probe` in the help of `app`.
void register_probe_command(CLI::App& app);

// `imgsmith probe ARGS...`: runs the embedded probe with ARGS, or writes it
// out with --write PATH. Throws InputError.
int probe_main(int argc, char** argv);

// The probe binary this imgsmith carries for the CPU it runs on.
std::string embedded_probe();
// The architectures it carries a probe for, in Docker's names (TARGETARCH):
// its own first, then arm64 when the build had the cross compiler.
std::vector<std::string> embedded_probe_arches();
// The probe for `arch` (amd64, arm64). Throws InputError for one it lacks.
std::string embedded_probe(const std::string& arch);
// Writes the probe for `arch` to `path`, mode 0755, creating its directory.
void write_probe(const std::string& path, const std::string& arch);

}  // namespace imgsmith
