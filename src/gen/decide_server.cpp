// Where a container command listens: the server it runs (data/servers.json),
// its port and address from the command's arguments, the image's
// environment or the server's own defaults. A server that binds 127.0.0.1
// inside a container cannot be reached through any port mapping, and a
// port gen cannot see is a Kubernetes Job instead of a Service: both are
// decided here, from the command, never from the way gen found it.
#include <algorithm>
#include <cctype>

#include "decisions.hpp"
#include "imgsmith/util/error.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {
namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_python(const std::string& program) {
  const std::string name = base_name(program);
  if (name == "python" || name == "python3") return true;
  // python3.11
  if (name.rfind("python3.", 0) != 0 || name.size() == 8) return false;
  return std::all_of(name.begin() + 8, name.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string env_value(const std::vector<std::string>& env, const std::string& key) {
  if (key.empty()) return "";
  for (auto it = env.rbegin(); it != env.rend(); ++it)
    if (it->rfind(key + "=", 0) == 0) return it->substr(key.size() + 1);
  return "";
}

// $PORT, ${PORT} and ${PORT:-8000} anywhere in a word ("0.0.0.0:$PORT"),
// as a shell expands them with `env`; "" when a value cannot be told here.
// Docker runs an exec-form command with no shell: there a variable stays
// as written, which no server reads as a port, so the word is "" too.
std::string expand(const std::string& word, const std::vector<std::string>& env, bool shell) {
  const auto dollar = word.find('$');
  if (dollar == std::string::npos) return word;
  if (!shell) return "";
  std::string name, fallback;
  std::size_t end;
  if (dollar + 1 < word.size() && word[dollar + 1] == '{') {
    end = word.find('}', dollar);
    if (end == std::string::npos) return "";
    name = word.substr(dollar + 2, end - dollar - 2);
    ++end;
    if (const auto dash = name.find(":-"); dash != std::string::npos) {
      fallback = name.substr(dash + 2);
      name = name.substr(0, dash);
    }
  } else {
    end = dollar + 1;
    while (end < word.size() &&
           (std::isalnum(static_cast<unsigned char>(word[end])) != 0 || word[end] == '_'))
      ++end;
    name = word.substr(dollar + 1, end - dollar - 1);
  }
  std::string value = env_value(env, name);
  if (value.empty()) value = fallback;
  if (value.empty()) return "";
  return word.substr(0, dollar) + value + expand(word.substr(end), env, shell);
}

int port_number(const std::string& text) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return 0;
  const int port = std::stoi(text);
  return port >= 1 && port <= 65535 ? port : 0;
}

// "HOST:PORT", ":PORT", "[::]:PORT", "PORT" (Django's runserver); a unix
// socket or an unexpanded variable leaves both empty.
void split_address(const std::string& text, std::string& host, std::string& port) {
  host.clear();
  port.clear();
  if (text.rfind("unix:", 0) == 0 || text.rfind("fd://", 0) == 0) return;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos) return;
    host = text.substr(1, close - 1);
    if (close + 1 < text.size() && text[close + 1] == ':') port = text.substr(close + 2);
    return;
  }
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) {
    if (port_number(text) != 0)
      port = text;
    else
      host = text;
    return;
  }
  host = text.substr(0, colon);
  port = text.substr(colon + 1);
  if (host.empty()) host = "0.0.0.0";  // gunicorn's ":8000"
}

bool loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// The command as the program runs it: a shell line that is one plain
// command is split (after the last `&&` or `;`, `exec` dropped); `env K=V`,
// `uv run`, `poetry run`, `pdm run`, `pipenv run` prefixes are dropped.
// Returns false when the command cannot be read.
bool unwrap(std::vector<std::string> cmd, std::vector<std::string>& words,
            std::vector<std::string>& env, bool& shell) {
  shell = false;
  if (cmd.size() == 3 && (base_name(cmd[0]) == "sh" || base_name(cmd[0]) == "bash") &&
      (cmd[1] == "-c" || cmd[1] == "-lc")) {
    shell = true;
    std::string line = cmd[2];
    for (const std::string sep : {"&&", ";"})
      if (const auto at = line.rfind(sep); at != std::string::npos)
        line = line.substr(at + sep.size());
    if (line.find_first_of("|<>`&(") != std::string::npos) return false;
    try {
      cmd = split_command(line);
    } catch (const InputError&) {
      return false;
    }
  }
  std::size_t i = 0;
  while (i < cmd.size()) {
    const std::string name = base_name(cmd[i]);
    if (name == "exec") {
      ++i;
    } else if (name == "env") {
      for (++i; i < cmd.size() && cmd[i].find('=') != std::string::npos && cmd[i][0] != '-'; ++i)
        env.push_back(cmd[i]);
    } else if ((name == "uv" || name == "poetry" || name == "pdm" || name == "pipenv") &&
               i + 1 < cmd.size() && cmd[i + 1] == "run") {
      i += 2;
    } else {
      break;
    }
  }
  words.assign(cmd.begin() + static_cast<std::ptrdiff_t>(std::min(i, cmd.size())), cmd.end());
  return !words.empty();
}

struct Invocation {
  std::string program;  // argv[0]'s name, "" for Python
  std::string module;   // python -m MODULE
  std::string script;   // python SCRIPT: its file name
  std::vector<std::string> args;
};

Invocation invocation(const std::vector<std::string>& words) {
  Invocation inv;
  if (!is_python(words[0])) {
    inv.program = base_name(words[0]);
    inv.args.assign(words.begin() + 1, words.end());
    return inv;
  }
  std::size_t i = 1;
  // The interpreter's own options before the module or script.
  while (i < words.size() && words[i].size() > 1 && words[i][0] == '-' && words[i] != "-m" &&
         words[i] != "-c") {
    if (words[i] == "-X" || words[i] == "-W") ++i;
    ++i;
  }
  if (i + 1 < words.size() && words[i] == "-m") {
    inv.module = words[i + 1];
    i += 2;
  } else if (i < words.size() && words[i] != "-c") {
    inv.script = base_name(words[i]);
    ++i;
  } else {
    return inv;
  }
  inv.args.assign(words.begin() + static_cast<std::ptrdiff_t>(std::min(i, words.size())),
                  words.end());
  return inv;
}

// Whether a row names the invocation's program, module or script, whatever
// its arguments.
bool names(const ServerFact& row, const Invocation& inv, const std::set<std::string>& top_level) {
  bool named = false;
  if (!inv.program.empty()) named = contains(row.programs, inv.program);
  if (!inv.module.empty()) named = contains(row.modules, inv.module);
  // Half the project's marker paths at least (two when it names two): a
  // checkout of another release may lack one.
  if (!inv.script.empty() && !row.script.empty() && inv.script == row.script) {
    const auto present =
        std::count_if(row.markers.begin(), row.markers.end(),
                      [&](const std::string& m) { return top_level.count(m) != 0; });
    const auto needed = std::max<std::ptrdiff_t>(
        std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(row.markers.size())),
        static_cast<std::ptrdiff_t>((row.markers.size() + 1) / 2));
    named = present >= needed;
  }
  return named;
}

// How well a row names the invocation: 0 not at all; a row that also
// names a subcommand the args hold beats one that names none.
int match(const ServerFact& row, const Invocation& inv, const std::set<std::string>& top_level) {
  if (!names(row, inv, top_level)) return 0;
  if (row.subcommand.empty()) return 1;
  return contains(inv.args, row.subcommand) ? 2 : 0;
}

}  // namespace

ServerListen server_listen(const std::vector<std::string>& cmd,
                           const std::vector<std::string>& env_in, const Tables& tables,
                           const std::set<std::string>& top_level,
                           const std::string& configured_host) {
  ServerListen out;
  std::vector<std::string> words, env = env_in;
  bool shell = false;
  if (cmd.empty() || !unwrap(cmd, words, env, shell)) return out;
  out.shell = shell;
  const Invocation inv = invocation(words);
  int best = 0;
  for (const auto& row : tables.servers)
    if (const int m = match(row, inv, top_level); m > best) {
      best = m;
      out.server = &row;
    }
  if (out.server == nullptr) {
    // A program that serves only with a subcommand it was not given
    // (`interpreter` without --server): no server, and said so.
    for (const auto& r : tables.servers)
      if (!r.subcommand.empty() && names(r, inv, top_level)) {
        out.without_subcommand = &r;
        break;
      }
    return out;
  }
  const ServerFact& row = *out.server;
  const auto& args = inv.args;
  std::string port, host;
  // A flag's value: "--port 9000" or "--port=9000"; the index of the next
  // word to read.
  auto value_of = [&](const std::vector<std::string>& flags, std::size_t& i, std::string& value,
                      std::string& from) {
    for (const auto& flag : flags) {
      // No address or port starts with "--": `--listen --port 8190`.
      if (args[i] == flag && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
        value = args[i + 1];
        from = flag + " " + args[i + 1];
        ++i;
        return true;
      }
      if (args[i].rfind(flag + "=", 0) == 0) {
        value = args[i].substr(flag.size() + 1);
        from = args[i];
        return true;
      }
    }
    return false;
  };
  bool positional_seen = false, after_subcommand = row.subcommand.empty();
  bool config = false;
  for (const auto& file : row.config_files) config = config || top_level.count(file) != 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string value, from;
    // After `--` the words are the app's own (streamlit run app.py -- ...).
    if (args[i] == "--") break;
    if (value_of(row.config_flags, i, value, from)) {
      config = true;
    } else if (value_of(row.port_flags, i, value, from)) {
      port = expand(value, env, shell);
      out.port_from = from;
    } else if (value_of(row.host_flags, i, value, from)) {
      host = expand(value, env, shell);
      out.host_from = from;
    } else if (value_of(row.bind_flags, i, value, from)) {
      std::string h, p;
      const std::string address = expand(value, env, shell);
      split_address(address, h, p);
      // HOST alone keeps the default port; a socket or a variable is no
      // port gen can read.
      if (!p.empty() || h.empty()) {
        port = p;
        out.port_from = from;
      }
      host = h;
      out.host_from = from;
    } else if (!row.bare_listen_flag.empty() && args[i] == row.bare_listen_flag) {
      // `--listen` alone is every interface; `--listen ADDRESS` one.
      const bool valued = i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-';
      host = valued ? args[i + 1] : "0.0.0.0";
      out.host_from = valued ? args[i] + " " + args[i + 1] : args[i];
      if (valued) ++i;
    } else if (args[i] == row.subcommand) {
      after_subcommand = true;
    } else if (row.positional_addrport && after_subcommand && !positional_seen &&
               !args[i].empty() && args[i][0] != '-') {
      // Only [ADDR:]PORT: another positional (an app, a directory) is
      // not the address.
      std::string h, p;
      split_address(expand(args[i], env, shell), h, p);
      if (port_number(p) == 0) continue;
      positional_seen = true;
      port = p;
      out.port_from = "its address argument " + args[i];
      // The argument is there even when it names a port only: a fix
      // would change it, not add a second.
      out.host_from = out.port_from;
      if (!h.empty()) host = h;
    }
  }
  // A config file the server reads may set either: what the arguments do
  // not say, gen cannot tell.
  if (config) {
    out.config = true;
    if (out.port_from.empty()) out.port_from = "its config file";
    if (out.host_from.empty()) out.host_from = "its config file";
  }
  out.host_by_argument = !out.host_from.empty();
  if (host.empty() && out.host_from.empty() && !configured_host.empty()) {
    host = configured_host;
    out.host_from = "the project's config";
  }
  if (port.empty() && out.port_from.empty()) {
    if (const std::string v = env_value(env, row.env_port); !v.empty()) {
      port = v;
      out.port_from = row.env_port + "=" + v;
      // gunicorn binds 0.0.0.0:$PORT when PORT is set.
      if (host.empty() && out.host_from.empty() && !row.env_port_host.empty()) {
        host = row.env_port_host;
        out.host_from = out.port_from;
      }
    }
  }
  if (host.empty() && out.host_from.empty()) {
    if (std::string v = env_value(env, row.env_host); !v.empty()) {
      out.host_from = row.env_host + "=" + v;
      // A URL or HOST:PORT (TS_INFERENCE_ADDRESS, OLLAMA_HOST): its host.
      if (const auto scheme = v.find("://"); scheme != std::string::npos) v = v.substr(scheme + 3);
      if (const auto slash = v.find('/'); slash != std::string::npos) v.resize(slash);
      std::string h, p;
      split_address(v, h, p);
      host = h;
      if (port.empty() && out.port_from.empty() && port_number(p) != 0) {
        port = p;
        out.port_from = out.host_from;
      }
    }
  }
  if (port.empty() && out.port_from.empty() && row.default_port != 0) {
    port = std::to_string(row.default_port);
    out.port_from = row.name + "'s default";
  }
  if (host.empty() && out.host_from.empty()) {
    host = row.default_host;
    out.host_from = row.name + "'s default";
  }
  if (host.empty() && positional_seen) host = row.default_host;  // runserver 9000
  out.port = port_number(port);
  out.unexpanded_port = out.port == 0 && !shell && out.port_from.find('$') != std::string::npos;
  if (out.port == 0 && !out.port_from.empty() && !out.config)
    out.port_from += " (not a port gen can read)";
  out.host = host;
  out.loopback_only = loopback(host);
  if (out.loopback_only) {
    // The fix keeps the port in use ("0.0.0.0:8000" of a server on 9000).
    const std::string default_port = ":" + std::to_string(row.default_port);
    for (std::string word : row.listen_all) {
      if (out.port != 0 && row.default_port != 0 && word.size() > default_port.size() &&
          word.compare(word.size() - default_port.size(), default_port.size(), default_port) == 0)
        word = word.substr(0, word.size() - default_port.size()) + ":" + std::to_string(out.port);
      out.fix.push_back(word);
    }
    out.fix_env = row.listen_all_env;
  }
  return out;
}

}  // namespace imgsmith::gen
