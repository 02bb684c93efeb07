// The command-line options an entry script declares: argparse's
// add_argument, click's @click.option and absl's flags.DEFINE_*, read in the
// script and in the project's own modules it imports (ComfyUI's main.py
// imports comfy/cli_args.py, Fooocus's launcher reaches its parser two
// imports away). A server script very often takes its port and address this
// way (`--port` with a default of 9090, `--host` defaulting to 127.0.0.1),
// so the options are where gen reads them when no server call says.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include "detect_internal.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;

namespace {

// How far imports are followed, and how many files at most: enough for a
// parser module two imports from the entry script, not a whole tree.
constexpr int kImportDepth = 2;
constexpr std::size_t kMaxFiles = 40;
constexpr std::uintmax_t kMaxFileBytes = 1 << 20;

// A project file, or nothing: a module path that is not one (a directory, a
// file too big to be a parser module, one that cannot be read) is skipped,
// as Python would find it elsewhere or not at all.
std::string module_text(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) > kMaxFileBytes || ec) return "";
  try {
    return read_text(path);
  } catch (const std::exception&) {
    return "";
  }
}

// The project files an import line may name: `import a.b`, `from a.b
// import c` (a/b.py, a/b/__init__.py, a/b/c.py), `from . import x` and
// `from .m import x` relative to the importing file; each from the project's
// top, its src/ and the importing file's directory.
std::vector<std::string> imported_files(const fs::path& root, const std::string& importer,
                                        const std::string& line) {
  static const std::regex kFrom(R"(^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?\s*([\w\s,]*))");
  static const std::regex kImport(
      R"(^\s*import\s+([\w.]+(\s+as\s+\w+)?(\s*,\s*[\w.]+(\s+as\s+\w+)?)*))");
  std::vector<std::string> modules;  // as paths: "a/b"
  std::vector<fs::path> bases;
  const fs::path importer_dir = fs::path(importer).parent_path();
  std::smatch m;
  if (line.size() > 500) return {};
  auto dotted = [](std::string s) {
    for (auto& c : s)
      if (c == '.') c = '/';
    return s;
  };
  if (std::regex_search(line, m, kFrom)) {
    const std::string module = dotted(m[2].str());
    if (m[1].length() > 0) {
      fs::path base = importer_dir;
      for (long up = 1; up < m[1].length(); ++up) base = base.parent_path();
      bases = {base};
    } else {
      bases = {"", "src", importer_dir};
    }
    if (!module.empty()) modules.push_back(module);
    for (const auto& name : split(m[3].str(), ",")) {
      std::istringstream words(name);
      std::string word;
      if (words >> word) modules.push_back(module.empty() ? word : module + "/" + word);
    }
  } else if (std::regex_search(line, m, kImport)) {
    bases = {"", "src", importer_dir};
    for (const auto& name : split(m[1].str(), ",")) {
      std::istringstream words(name);
      std::string word;
      if (words >> word) modules.push_back(dotted(word));
    }
  }
  std::vector<std::string> files;
  for (const auto& base : bases)
    for (const auto& module : modules)
      for (const char* suffix : {".py", "/__init__.py"}) {
        const fs::path rel = (base / (module + suffix)).lexically_normal();
        std::error_code ec;
        if (!rel.empty() && *rel.begin() != ".." && fs::is_regular_file(root / rel, ec))
          files.push_back(rel.generic_string());
      }
  return files;
}

// The server framework an import line names ("from websockets.sync.server
// import serve" -> "websockets"), or "": the libraries that listen on a
// port, by their import names (each one's docs). A plain socket is left out:
// clients use it as much.
std::string server_framework(const std::string& line) {
  static const std::set<std::string> kServers = {
      "aiohttp", "bottle",    "cherrypy", "falcon",   "fastapi",    "flask",        "gradio",
      "grpc",    "hypercorn", "litestar", "quart",    "sanic",      "starlette",    "streamlit",
      "tornado", "twisted",   "uvicorn",  "waitress", "websockets", "socketserver", "werkzeug"};
  static const std::regex kModule(R"(^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+)))");
  std::smatch m;
  if (line.size() > 500 || !std::regex_search(line, m, kModule)) return "";
  const std::string module = m[1].matched ? m[1].str() : m[2].str();
  if (module == "http.server" || module.rfind("http.server.", 0) == 0) return "http.server";
  const std::string top = module.substr(0, module.find('.'));
  return kServers.count(top) != 0 ? top : "";
}

// A Python string literal's text ('x', "x", f"x"), or "" when the text is not one.
std::string string_literal(std::string_view text) {
  text = trim(text);
  std::size_t prefix = 0;  // r"", f"", b"", rb""
  while (prefix < 2 && prefix < text.size() && text[prefix] != '\0' &&
         std::strchr("rRbBfFuU", text[prefix]) != nullptr)
    ++prefix;
  if (prefix < text.size() && (text[prefix] == '"' || text[prefix] == '\''))
    text.remove_prefix(prefix);
  if (text.size() < 2 || (text.front() != '"' && text.front() != '\'') ||
      text.back() != text.front())
    return "";
  return std::string(text.substr(1, text.size() - 2));
}

// Whether a string literal's text is an option's flag: "-p", "--port"; "--"
// alone is argparse's end of options, no option.
bool is_flag(const std::string& text) {
  return text.size() >= 2 && text.front() == '-' &&
         text.find_first_not_of('-') != std::string::npos;
}

// The flag a dest names: "--server_name" -> "server_name".
std::string dest_of(const std::string& flag) {
  std::string dest = flag.substr(flag.find_first_not_of('-'));
  for (auto& c : dest)
    if (c == '-') c = '_';
  return dest;
}

// One option from its call's arguments; nullopt when they declare none.
std::optional<ScriptOption> option_from(const std::vector<std::string>& arguments, bool absl,
                                        const std::string& where) {
  ScriptOption option;
  option.where = where;
  std::vector<std::string> positional;
  static const std::regex kKeyword(R"(^\s*([A-Za-z_]\w*)\s*=[^=])");
  for (const auto& argument : arguments) {
    std::smatch m;
    if (std::regex_search(argument, m, kKeyword)) {
      const std::string value(trim(argument.substr(argument.find('=') + 1)));
      if (m[1] == "default") option.default_value = value;
      if (m[1] == "const") option.const_value = value;
      if (m[1] == "dest") option.dest = string_literal(value);
      if (m[1] == "action") option.action = string_literal(value);
    } else {
      positional.emplace_back(trim(argument));
    }
  }
  if (absl) {
    // flags.DEFINE_integer("port", 8080, "help"): the name, then the default.
    if (positional.size() < 2) return std::nullopt;
    const std::string name = string_literal(positional[0]);
    if (name.empty()) return std::nullopt;
    option.flags = {"--" + name};
    option.dest = name;
    if (option.default_value.empty()) option.default_value = positional[1];
    return option;
  }
  std::string longest;
  for (const auto& text : positional) {
    const std::string flag = string_literal(text);
    if (!is_flag(flag)) continue;
    option.flags.push_back(flag);
    if (flag.rfind("--", 0) == 0 && longest.empty()) longest = flag;
  }
  if (option.flags.empty()) return std::nullopt;
  if (option.dest.empty()) option.dest = dest_of(longest.empty() ? option.flags.front() : longest);
  return option;
}

// A parameter as written, `name: annotation = default`, split at its
// top-level '=' (not one inside brackets, a call or a string): {name,
// default}; the default "" when there is none.
std::pair<std::string, std::string> parameter_parts(const std::string& parameter) {
  static const std::regex kName(R"(^\s*([A-Za-z_]\w*))");
  std::smatch m;
  if (!std::regex_search(parameter, m, kName)) return {};
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < parameter.size(); ++i) {
    const char c = parameter[i];
    if (quote != 0) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (depth == 0 && c == '=' && (i + 1 == parameter.size() || parameter[i + 1] != '='))
      return {m[1].str(), std::string(trim(parameter.substr(i + 1)))};
  }
  return {m[1].str(), ""};
}

// Typer and Fire make a function's parameters its options: the function
// given to `typer.run(...)` or `fire.Fire(...)`, or one under an
// `@app.command()` decorator (click's own are read from @click.option).
// `port: int = 8123` is --port with 8123 (Typer writes server_port as
// --server-port; Fire takes both); `port: int = typer.Option(8123, "--port",
// "-p")` names its flags; `listen: bool = False` is a switch.
void function_parameter_options(const std::string& file, const std::vector<std::string>& lines,
                                std::vector<ScriptOption>& options) {
  static const std::regex kRun(R"((?:typer\.run|fire\.Fire)\(\s*([A-Za-z_]\w*)\s*\))");
  static const std::regex kDef(R"(^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\()");
  std::set<std::string> commands;
  for (const auto& line : lines) {
    std::smatch m;
    if (line.size() <= 1000 && std::regex_search(line, m, kRun)) commands.insert(m[1].str());
  }
  bool decorated = false;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string& line = lines[n];
    const auto code = line.find_first_not_of(" \t");
    if (line.size() > 1000 || code == std::string::npos || line[code] == '#') continue;
    if (line[code] == '@') {
      decorated = decorated || (line.find(".command(") != std::string::npos &&
                                line.find("click.") == std::string::npos);
      continue;
    }
    std::smatch m;
    const bool is_def = std::regex_search(line, m, kDef);
    const bool command = is_def && (decorated || commands.count(m[1].str()) != 0);
    decorated = false;
    if (!command) continue;
    const std::size_t open = static_cast<std::size_t>(m.position(0) + m.length(0)) - 1;
    const std::string where = file + ":" + std::to_string(n + 1);
    for (const auto& parameter : call_arguments(call_text(lines, n, open))) {
      auto [name, value] = parameter_parts(parameter);
      if (name.empty() || value.empty() || name == "self" || name == "cls") continue;
      bool known = false;
      for (const auto& o : options) known = known || o.dest == name;
      if (known) continue;
      ScriptOption option;
      option.dest = name;
      option.where = where;
      const auto call = value.find('(');
      if (call != std::string::npos &&
          (value.rfind("typer.Option(", 0) == 0 || value.rfind("Option(", 0) == 0)) {
        for (const auto& argument : call_arguments(value.substr(call))) {
          const std::string flag = string_literal(argument);
          if (is_flag(flag))
            option.flags.push_back(flag);
          else if (argument.rfind("default", 0) == 0 && argument.find('=') != std::string::npos)
            option.default_value = std::string(trim(argument.substr(argument.find('=') + 1)));
          else if (option.default_value.empty() && argument.find('=') == std::string::npos)
            option.default_value = argument;
        }
        if (option.default_value == "...") option.default_value.clear();  // required
      } else {
        option.default_value = value;
      }
      if (option.flags.empty()) {
        std::string flag = "--" + name;
        std::replace(flag.begin(), flag.end(), '_', '-');
        option.flags.push_back(flag);
      }
      if (option.default_value == "False") option.action = "store_true";
      options.push_back(std::move(option));
    }
  }
}

// Each option a file declares, in the order written, and the defaults its
// parser.set_defaults(...) calls give (`port=None`: Fooocus's args_manager.py).
void options_in(const std::string& file, const std::vector<std::string>& lines,
                std::vector<ScriptOption>& options,
                std::vector<std::pair<std::string, std::string>>& set_defaults) {
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string& line = lines[n];
    const auto code = line.find_first_not_of(" \t");
    if (line.size() > 1000 || code == std::string::npos || line[code] == '#') continue;
    std::size_t open = std::string::npos;
    bool absl = false;
    if (const auto at = line.find(".set_defaults("); at != std::string::npos) {
      for (const auto& argument : call_arguments(call_text(lines, n, at + 13))) {
        const auto equals = argument.find('=');
        if (equals != std::string::npos && equals + 1 < argument.size() &&
            argument[equals + 1] != '=')
          set_defaults.emplace_back(trim(argument.substr(0, equals)),
                                    trim(argument.substr(equals + 1)));
      }
      continue;
    }
    if (const auto at = line.find(".add_argument("); at != std::string::npos) {
      open = at + 13;
    } else if (const auto at = line.find("click.option("); at != std::string::npos) {
      open = at + 12;
    } else if (const auto at = line.find("DEFINE_"); at != std::string::npos) {
      const auto paren = line.find('(', at);
      const std::string kind = line.substr(at + 7, paren == std::string::npos ? 0 : paren - at - 7);
      if (kind == "integer" || kind == "string" || kind == "bool" || kind == "boolean") {
        open = paren;
        absl = true;
      }
    }
    if (open == std::string::npos) continue;
    const auto option = option_from(call_arguments(call_text(lines, n, open)), absl,
                                    file + ":" + std::to_string(n + 1));
    if (option) options.push_back(*option);
  }
  function_parameter_options(file, lines, options);
}

// Within a string literal (`quote`, its opening quote): the character at i,
// and the one after it when it escapes that, copied to `out`; the closing
// quote ends the literal. False outside one.
bool copy_in_string(const std::string& text, std::size_t& i, char& quote, std::string& out) {
  if (quote == 0) return false;
  out += text[i];
  if (text[i] == '\\' && i + 1 < text.size())
    out += text[++i];
  else if (text[i] == quote)
    quote = 0;
  return true;
}

}  // namespace

std::string call_text(const std::vector<std::string>& lines, std::size_t n, std::size_t open) {
  std::string call;
  int depth = 0;
  char quote = 0;
  for (std::size_t k = n; k < lines.size() && k < n + 20; ++k) {
    const std::string part = k == n ? lines[k].substr(open) : lines[k];
    for (std::size_t i = 0; i < part.size(); ++i) {
      if (copy_in_string(part, i, quote, call)) continue;
      const char c = part[i];
      call += c;
      if (c == '"' || c == '\'') quote = c;
      if (c == '(') ++depth;
      if (c == ')' && --depth == 0) break;
    }
    quote = 0;  // a string does not go on over lines, but for triple quotes, which end here too
    if (depth == 0 || call.size() > 4000) break;
    call += ' ';
  }
  call.resize(std::min<std::size_t>(call.size(), 4000));  // read by regular expressions
  return call;
}

std::vector<std::string> call_arguments(const std::string& call) {
  std::vector<std::string> arguments;
  std::string current;
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < call.size(); ++i) {
    if (copy_in_string(call, i, quote, current)) continue;
    const char c = call[i];
    if (c == '"' || c == '\'') quote = c;
    if (c == '(' || c == '[' || c == '{') {
      if (depth++ == 0 && c == '(') continue;  // the call's own parenthesis
    }
    if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0 && c == ')') break;
    }
    if (depth == 1 && c == ',') {
      if (!trim(current).empty()) arguments.emplace_back(trim(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (!trim(current).empty()) arguments.emplace_back(trim(current));
  return arguments;
}

ScriptOptions script_options(const fs::path& root, const std::string& entry) {
  ScriptOptions found;
  std::vector<ScriptOption>& options = found.options;
  std::vector<std::pair<std::string, std::string>> set_defaults;
  std::set<std::string> seen{entry};
  std::vector<std::string> level{entry};
  for (int depth = 0; depth <= kImportDepth && !level.empty(); ++depth) {
    std::vector<std::string> next;
    for (const auto& file : level) {
      std::vector<std::string> lines;
      std::istringstream in(module_text(root / file));
      for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
      options_in(file, lines, options, set_defaults);
      if (depth == kImportDepth) continue;
      for (std::size_t n = 0; n < lines.size(); ++n) {
        const std::string& line = lines[n];
        if (line.find("import") == std::string::npos) continue;
        if (found.server_import.empty())
          if (const std::string server = server_framework(line); !server.empty())
            found.server_import = server + " (" + file + ":" + std::to_string(n + 1) + ")";
        for (auto& imported : imported_files(root, file, line))
          if (seen.size() < kMaxFiles && seen.insert(imported).second)
            next.push_back(std::move(imported));
      }
    }
    level = std::move(next);
  }
  // set_defaults wins over add_argument's default, wherever it is called.
  for (const auto& [dest, value] : set_defaults)
    for (auto& option : options)
      if (option.dest == dest) option.default_value = value;
  return found;
}

}  // namespace imgsmith::gen
