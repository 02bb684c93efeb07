// `imgsmith completion bash|zsh|fish`: shell completion scripts generated
// from the command line's own definition (its subcommands, options and the
// values they accept), so a flag added to a command is completed without
// anyone editing a script. The Debian package installs all three.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace imgsmith {

// One option as completion sees it.
struct CompletionOption {
  std::vector<std::string> names;  // "--output", "-o"
  std::string description;         // its help's first line
  bool takes_value = false;
  bool repeatable = false;
  // The values it accepts, when they are a known set ("json", "cuda=" for
  // a CATEGORY=SIZE option); empty for a value that is a path.
  std::vector<std::string> values;
};

struct CompletionCommand {
  std::string name;
  std::string description;
  std::vector<CompletionOption> options;
  bool takes_paths = false;  // it has positionals, all of them paths
};

// The model the scripts are written from, read from `app` after every
// command is registered.
std::vector<CompletionCommand> completion_model(const CLI::App& app);

std::string bash_completion(const std::vector<CompletionCommand>& commands);
std::string zsh_completion(const std::vector<CompletionCommand>& commands);
std::string fish_completion(const std::vector<CompletionCommand>& commands);

// Registers `imgsmith completion SHELL`; reads `app` when it runs.
void register_completion_command(CLI::App& app);

}  // namespace imgsmith
