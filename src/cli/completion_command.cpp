#include "completion_command.hpp"

#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "imgsmith/attribution/attribution.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/models/vram.hpp"
#include "imgsmith/render/renderers.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"
#include "imgsmith/version.hpp"

namespace imgsmith {
namespace {

std::string first_line(const std::string& text) {
  auto line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == ':' || line.back() == ','))
    line.pop_back();
  return line;
}

// A CLI11 IsMember check shows its set in the type name: "TEXT:{a,b,c}".
std::vector<std::string> member_set(const std::string& type_name) {
  const auto open = type_name.find('{');
  const auto close = type_name.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  return split(type_name.substr(open + 1, close - open - 1), ",");
}

// The values of options whose choices live in imgsmith's tables rather than
// in an IsMember check (the check there gives a better message). A value
// listed here that imgsmith stops accepting fails tests/cli/completion_test.sh,
// which passes each one back to the command.
std::vector<std::string> option_values(const std::string& command, const CLI::Option& option) {
  const std::string name = option.get_lnames().empty() ? "" : option.get_lnames().front();
  std::vector<std::string> out;
  if (name == "format" || name == "report") {
    for (const auto& r : renderers())
      if (command != "diff" || r.diff) out.push_back(name == "report" ? r.name + "=" : r.name);
    return out;
  }
  if (name == "deny") return finding_ids();
  if (name == "budget") {
    for (const auto& category : builtin_rules().categories) out.push_back(category + "=");
    return out;
  }
  if (name == "fits") {
    for (const auto& gpu : known_gpus()) out.push_back(gpu.name);
    return out;
  }
  static const std::map<std::string, std::vector<std::string>> fixed = {
      {"flavor", {"auto", "base", "runtime", "devel"}},
      {"os", {"ubuntu22.04", "ubuntu24.04"}},
      {"precision", {"stored", "bf16", "fp16", "int8", "int4"}},
  };
  if (command == "gen" || name == "precision")
    if (const auto it = fixed.find(name); it != fixed.end()) return it->second;
  return member_set(option.get_type_name());
}

// Single-quoted for bash, zsh and fish alike is not possible (fish escapes
// with a backslash inside quotes), so each writer quotes its own way.
std::string sh_single_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string fish_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// zsh's _arguments spec reads [ ] : as syntax inside a description.
std::string zsh_description(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '[' || c == '(')
      out += '{';
    else if (c == ']' || c == ')')
      out += '}';
    else if (c == ':')
      out += ' ';
    else if (c == '\\' || c == '`' || c == '$')
      continue;
    else
      out += c;
  }
  return out;
}

std::string joined(const std::vector<std::string>& words) { return join(words, " "); }

std::string header(const std::string& shell) {
  return "# " + shell + " completion for imgsmith " + std::string(kVersion) +
         ", written by `imgsmith completion " + shell +
         "` from its command line's definition: regenerate it rather than edit it.\n";
}

}  // namespace

namespace {

// A command's options as completion sees them, and whether it takes paths
// (its positionals); hidden options (no group) are left out.
CompletionCommand describe_command(const CLI::App& app, const std::string& name) {
  CompletionCommand c;
  c.name = name;
  c.description = first_line(app.get_description());
  for (const auto* option : app.get_options()) {
    if (option->get_group().empty()) continue;
    if (!option->nonpositional()) {
      c.takes_paths = true;
      continue;
    }
    CompletionOption o;
    for (const auto& l : option->get_lnames()) o.names.push_back("--" + l);
    for (const auto& s : option->get_snames()) o.names.push_back("-" + s);
    o.description = first_line(option->get_description());
    o.takes_value = option->get_items_expected_max() > 0;
    o.repeatable = o.takes_value && option->get_expected_max() > 1;
    if (o.takes_value) o.values = option_values(name, *option);
    c.options.push_back(std::move(o));
  }
  return c;
}

}  // namespace

std::vector<CompletionCommand> completion_model(const CLI::App& app) {
  std::vector<CompletionCommand> commands = {describe_command(app, "")};
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    CompletionCommand c = describe_command(*sub, sub->get_name());
    if (c.name == "probe") {
      // main() hands `imgsmith probe ...` to probe_main() before CLI11
      // parses it: these are the options imgsmith itself reads there.
      c.options.push_back({{"--write"}, "Write the probe out to PATH, mode 0755", true, false, {}});
      c.options.push_back({{"--arch"},
                           "The probe --write writes: amd64 or arm64",
                           true,
                           false,
                           {"amd64", "arm64"}});
      c.options.push_back(
          {{"--write-all"}, "DIR/imgsmith-probe-ARCH for each CPU", true, false, {}});
      c.options.push_back({{"--summarize"},
                           "One table of many nodes' probe reports (files or directories)",
                           false,
                           false,
                           {}});
      c.options.push_back({{"--format"}, "--summarize's format", true, false, {"text", "json"}});
      c.takes_paths = true;
    }
    commands.push_back(std::move(c));
  }
  return commands;
}

std::string bash_completion(const std::vector<CompletionCommand>& commands) {
  std::ostringstream out;
  std::vector<std::string> names;
  for (const auto& c : commands)
    if (!c.name.empty()) names.push_back(c.name);
  out << header("bash")
      << "_imgsmith() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  # --option=value: bash splits it at '=' (COMP_WORDBREAKS)\n"
         "  if [[ $cur == = ]]; then cur=\"\"\n"
         "  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then prev=${COMP_WORDS[COMP_CWORD-2]}\n"
         "  fi\n"
         "  local command=\"\" word i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    word=${COMP_WORDS[i]}\n"
         "    case $word in "
      << join(names, "|")
      << ") command=$word; break ;; esac\n"
         "  done\n"
         "  local options=\"\" values=\"\" paths=0 takes_value=0\n"
         "  case $command in\n";
  for (const auto& c : commands) {
    out << "    " << (c.name.empty() ? "\"\"" : c.name) << ")\n";
    std::vector<std::string> all;
    for (const auto& o : c.options)
      for (const auto& n : o.names) all.push_back(n);
    if (c.name.empty()) all.insert(all.begin(), names.begin(), names.end());
    out << "      options=" << sh_single_quote(joined(all)) << "\n";
    if (c.takes_paths) out << "      paths=1\n";
    bool any_value = false;
    for (const auto& o : c.options) any_value = any_value || o.takes_value;
    if (any_value) {
      out << "      case $prev in\n";
      for (const auto& o : c.options) {
        if (!o.takes_value) continue;
        out << "        " << join(o.names, "|") << ") takes_value=1";
        if (!o.values.empty()) out << "; values=" << sh_single_quote(joined(o.values));
        out << " ;;\n";
      }
      out << "      esac\n";
    }
    out << "      ;;\n";
  }
  out << "  esac\n"
         "  if ((takes_value)); then\n"
         "    if [[ -n $values ]]; then\n"
         "      COMPREPLY=($(compgen -W \"$values\" -- \"$cur\"))\n"
         "      # CATEGORY= and FORMAT= wait for the rest of the value\n"
         "      [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace\n"
         "    else\n"
         "      compopt -o filenames\n"
         "      COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "    fi\n"
         "  elif [[ $cur == -* || $paths == 0 ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
         "  else\n"
         "    compopt -o filenames\n"
         "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "  fi\n"
         "}\n"
         "complete -F _imgsmith imgsmith\n";
  return out.str();
}

std::string zsh_completion(const std::vector<CompletionCommand>& commands) {
  std::ostringstream out;
  out << "#compdef imgsmith\n" << header("zsh") << "_imgsmith() {\n";
  out << "  if (( CURRENT == 2 )); then\n    local -a commands=(\n";
  for (const auto& c : commands)
    if (!c.name.empty())
      out << "      " << sh_single_quote(c.name + ":" + zsh_description(c.description)) << "\n";
  out << "    )\n"
         "    _describe -t commands 'imgsmith command' commands\n"
         "    return\n"
         "  fi\n"
         "  local command=$words[2]\n"
         "  shift words\n"
         "  (( CURRENT-- ))\n"
         "  case $command in\n";
  for (const auto& c : commands) {
    if (c.name.empty()) continue;
    out << "    " << c.name << ")\n      _arguments -s";
    for (const auto& o : c.options) {
      for (const auto& n : o.names) {
        std::string spec =
            (o.repeatable ? "*" : "") + n + "[" + zsh_description(o.description) + "]";
        if (o.takes_value)
          spec +=
              ":value:" + (o.values.empty() ? std::string("_files") : "(" + joined(o.values) + ")");
        out << " \\\n        " << sh_single_quote(spec);
      }
    }
    if (c.takes_paths) out << " \\\n        '*:path:_files'";
    out << "\n      ;;\n";
  }
  out << "  esac\n"
         "}\n"
         "_imgsmith \"$@\"\n";
  return out.str();
}

std::string fish_completion(const std::vector<CompletionCommand>& commands) {
  std::ostringstream out;
  out << header("fish") << "complete -c imgsmith -f\n";
  std::vector<std::string> names;
  for (const auto& c : commands)
    if (!c.name.empty()) names.push_back(c.name);
  for (const auto& c : commands) {
    const std::string when =
        c.name.empty() ? "__fish_use_subcommand" : "'__fish_seen_subcommand_from " + c.name + "'";
    if (!c.name.empty())
      out << "complete -c imgsmith -n __fish_use_subcommand -a " << c.name << " -d "
          << fish_quote(c.description) << "\n";
    for (const auto& o : c.options) {
      out << "complete -c imgsmith -n " << when;
      for (const auto& n : o.names)
        out << (n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1));
      if (o.takes_value)
        out << (o.values.empty() ? " -r -F" : " -x -a " + fish_quote(joined(o.values)));
      out << " -d " << fish_quote(o.description) << "\n";
    }
    if (c.takes_paths) out << "complete -c imgsmith -n " << when << " -F\n";
  }
  return out.str();
}

void register_completion_command(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "completion",
      "Print a shell completion script for imgsmith's commands, flags and values (formats,\n"
      "flavours, finding ids, categories)");
  cmd->footer(
      "Install it where your shell looks:\n"
      "  bash  imgsmith completion bash > ~/.local/share/bash-completion/completions/imgsmith\n"
      "  zsh   imgsmith completion zsh > \"${fpath[1]}/_imgsmith\"\n"
      "  fish  imgsmith completion fish > ~/.config/fish/completions/imgsmith.fish\n"
      "The Debian package installs all three.\n"
      "\n"
      "Exit status: 0 written; 2 bad usage.");
  cmd->add_option("SHELL", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->callback([&app, shell] {
    const auto model = completion_model(app);
    if (*shell == "bash")
      std::cout << bash_completion(model);
    else if (*shell == "zsh")
      std::cout << zsh_completion(model);
    else
      std::cout << fish_completion(model);
    std::cout.flush();
    if (!std::cout) throw InputError("could not write the completion script to standard output");
  });
}

}  // namespace imgsmith
