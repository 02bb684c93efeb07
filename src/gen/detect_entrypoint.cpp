// Project detection's entrypoint: the command that starts a Python project
// (a script it declares, a web app a server runs, a module, notebooks), and
// the Python its .python-version names.
#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>

#include "detect_internal.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;

bool depends_on(const PythonProject& py, const std::string& name) {
  for (const auto& r : py.requirements)
    if (r.name == name) return true;
  return false;
}

// Nothing installs a src/ package without a [build-system], and the
// container starts in the project's directory: Python is told to look in
// src/, relative to it.
void import_from_src(PythonProject& py, const std::string& why, std::vector<Evidence>& evidence) {
  if (std::find(py.env.begin(), py.env.end(), "PYTHONPATH=src") != py.env.end()) return;
  py.env.push_back("PYTHONPATH=src");
  evidence.push_back({why,
                      "a src/ layout: PYTHONPATH=src, so that it imports from the working "
                      "directory"});
}

namespace {

// A Procfile's web process (or its first): the command the project's own
// deployments run. $PORT, which the platform sets, becomes 8000 here, and
// the container gets PORT=8000 too; a line that needs a shell gets one.
bool procfile_command(const fs::path& root, PythonProject& py, std::vector<Evidence>& evidence) {
  if (!regular_or_absent(root / "Procfile")) return false;
  std::istringstream lines(read_text(root / "Procfile"));
  std::string line, chosen, chosen_name;
  int number = 0, chosen_line = 0;
  static const std::regex kProcess(R"(^([A-Za-z0-9_-]+):\s*(.+?)\s*$)");
  while (std::getline(lines, line)) {
    ++number;
    std::smatch m;
    if (line.size() > 2000 || !std::regex_match(line, m, kProcess)) continue;
    if (chosen.empty() || (m[1].str() == "web" && chosen_name != "web")) {
      chosen = m[2].str();
      chosen_name = m[1].str();
      chosen_line = number;
    }
  }
  if (chosen.empty()) return false;
  const std::string where = "Procfile:" + std::to_string(chosen_line);
  static const std::regex kPort(R"(\$\{PORT(:-(\d+))?\}|\$PORT\b)");
  std::smatch m;
  int port = 8000;
  if (std::regex_search(chosen, m, kPort) && m[2].matched) port = std::stoi(m[2].str());
  const bool uses_port = std::regex_search(chosen, kPort);
  const std::string command = std::regex_replace(chosen, kPort, std::to_string(port));
  if (command.find_first_of("$&|;<>`") != std::string::npos) {
    py.cmd = {"/bin/sh", "-c", chosen};
  } else {
    try {
      py.cmd = split_command(command);
    } catch (const InputError&) {
      py.cmd = {"/bin/sh", "-c", chosen};
    }
  }
  if (py.cmd.empty()) return false;
  if (chosen_name == "web" || uses_port) {
    py.port = port;
    // A web process that does not read $PORT listens where its server
    // does: 8000 until the server's row says otherwise.
    py.port_guessed = !uses_port;
    py.env.push_back("PORT=" + std::to_string(port));
  }
  py.cmd_source = where;
  evidence.push_back({where, "entrypoint: the Procfile's " + chosen_name + " process" +
                                 (py.port != 0 ? ", on port " + std::to_string(py.port) +
                                                     " (PORT=" + std::to_string(py.port) + ")"
                                               : std::string())});
  return true;
}

// Django: manage.py beside settings naming WSGI_APPLICATION ("site.wsgi.application"),
// served by gunicorn when the project depends on it, else by runserver on
// every interface (Django's own server, for development).
bool django_command(const fs::path& root, const std::vector<fs::path>& python_sources,
                    PythonProject& py, std::vector<Evidence>& evidence) {
  // manage.py in src/ (paperless-ngx) runs from there: gunicorn changes
  // into it, runserver is called by its path.
  const bool in_src =
      !regular_or_absent(root / "manage.py") && regular_or_absent(root / "src" / "manage.py");
  if (!in_src && !regular_or_absent(root / "manage.py")) return false;
  static const std::regex kWsgi(R"(^\s*WSGI_APPLICATION\s*=\s*["']([\w.]+)\.application["'])");
  for (const auto& file : python_sources) {
    if (file.filename() != "settings.py" && file.parent_path().filename() != "settings") continue;
    std::istringstream lines(read_text(file));
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      std::smatch m;
      if (line.size() > 1000 || !std::regex_search(line, m, kWsgi)) continue;
      const std::string where = relative_to_root(file, root) + ":" + std::to_string(number);
      py.port = 8000;
      py.cmd_source = where;
      if (depends_on(py, "gunicorn")) {
        py.cmd = {"gunicorn", "--bind", "0.0.0.0:8000", m[1].str()};
        if (in_src) py.cmd.insert(py.cmd.begin() + 1, {"--chdir", "src"});
        evidence.push_back({where, "a Django project (" + m[1].str() +
                                       "), served by gunicorn on port 8000" +
                                       (in_src ? " from src/, where its manage.py is" : "")});
      } else {
        py.cmd = {"python", in_src ? "src/manage.py" : "manage.py", "runserver", "0.0.0.0:8000"};
        evidence.push_back({where,
                            "warning: a Django project served by runserver, Django's "
                            "development server; add gunicorn to the dependencies to "
                            "serve it properly"});
      }
      return true;
    }
  }
  return false;
}

// Ray Serve: a config file at the top naming applications by import path
// (`serve build` writes one, `serve deploy`/`serve run` read it). Its
// http_options say where the proxy listens.
bool ray_serve_command(const fs::path& root, PythonProject& py, std::vector<Evidence>& evidence) {
  std::vector<std::string> configs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const auto ext = e.path().extension();
    std::error_code type_ec;
    if ((ext == ".yaml" || ext == ".yml") && e.is_regular_file(type_ec))
      configs.push_back(e.path().filename().string());
  }
  std::sort(configs.begin(), configs.end());
  // "key: value" or "- key: value" (a list item), with its indentation.
  static const std::regex kKey(
      R"(^(\s*(?:-\s+)?)([A-Za-z_]+)\s*:\s*["']?([^"'#\s]*)["']?\s*(#.*)?$)");
  for (const auto& name : configs) {
    if (!regular_or_absent(root / name)) continue;
    std::istringstream lines(read_text(root / name));
    std::string line, host, port;
    bool applications = false, import_path = false, in_http = false;
    std::size_t http_indent = 0;
    while (std::getline(lines, line)) {
      // A flow mapping on one line: http_options: {host: 0.0.0.0, port: 9000}.
      if (const auto at = line.find("http_options:");
          at != std::string::npos && line.size() < 1000) {
        const auto open = line.find('{', at), close = line.rfind('}');
        if (open != std::string::npos && close != std::string::npos && close > open) {
          std::istringstream items(line.substr(open + 1, close - open - 1));
          std::string item;
          while (std::getline(items, item, ',')) {
            const auto colon = item.find(':');
            if (colon == std::string::npos) continue;
            const std::string key(trim(item.substr(0, colon)));
            std::string value(trim(item.substr(colon + 1)));
            value.erase(std::remove(value.begin(), value.end(), '"'), value.end());
            value.erase(std::remove(value.begin(), value.end(), '\''), value.end());
            if (key == "host") host = value;
            if (key == "port") port = value;
          }
          continue;
        }
      }
      std::smatch m;
      if (line.size() > 1000 || !std::regex_match(line, m, kKey)) continue;
      const std::size_t indent = m[1].length();
      const std::string key = m[2].str();
      if (in_http && indent <= http_indent) in_http = false;
      if (key == "applications" && indent == 0) applications = true;
      if (key == "import_path") import_path = true;
      if (key == "http_options") {
        in_http = true;
        http_indent = indent;
      } else if (in_http && key == "host") {
        host = m[3].str();
      } else if (in_http && key == "port") {
        port = m[3].str();
      }
    }
    if (!applications || !import_path) continue;
    py.cmd = {"serve", "run", name};
    py.cmd_source = name;
    py.port = 8000;
    if (!port.empty() && std::all_of(port.begin(), port.end(), ::isdigit) && port.size() <= 5 &&
        std::stoi(port) >= 1 && std::stoi(port) <= 65535)
      py.port = std::stoi(port);
    evidence.push_back({name,
                        "entrypoint: a Ray Serve config (applications with an import_path), "
                        "run by serve run on port " +
                            std::to_string(py.port)});
    // Where the proxy listens is decided with the command's server
    // (data/servers.json's row for serve run), from this host.
    py.server_host = host;
    if (!depends_on(py, "ray"))
      evidence.push_back({name,
                          "warning: ray is not among the dependencies; add ray[serve], or "
                          "the container will not start"});
    return true;
  }
  return false;
}

// A Makefile target a project runs itself by (serve, run, start, in that
// order), when its recipe is one command with no make variables in it:
// that command, since the image has no make.
bool makefile_command(const fs::path& root, PythonProject& py, std::vector<Evidence>& evidence) {
  if (!regular_or_absent(root / "Makefile")) return false;
  std::istringstream lines(read_text(root / "Makefile"));
  std::string line;
  std::map<std::string, std::pair<std::vector<std::string>, int>> recipes;
  std::string target;
  int target_line = 0;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line[0] == '\t') {
      if (!target.empty()) recipes[target].first.push_back(line.substr(1));
      continue;
    }
    static const std::regex kTarget(R"(^([A-Za-z0-9_.-]+)\s*:([^=]|$).*)");
    std::smatch m;
    target.clear();
    if (line.size() < 1000 && std::regex_match(line, m, kTarget)) {
      target = m[1].str();
      target_line = number;
      recipes[target] = {{}, target_line};
    }
  }
  for (const char* wanted : {"serve", "run", "start"}) {
    const auto it = recipes.find(wanted);
    if (it == recipes.end()) continue;
    const auto& [recipe, number] = it->second;
    const std::string where = "Makefile:" + std::to_string(number);
    std::string command = recipe.size() == 1 ? std::string(trim(recipe.front())) : "";
    while (!command.empty() && (command[0] == '@' || command[0] == '-')) command.erase(0, 1);
    if (command.empty() || command.find('$') != std::string::npos ||
        command.find_first_of("&|;<>`") != std::string::npos) {
      evidence.push_back({where, "the Makefile's " + std::string(wanted) +
                                     " target is not one plain command; gen does not run make "
                                     "in the image (--cmd gives the command)"});
      continue;
    }
    std::vector<std::string> words;
    try {
      words = split_command(command);
    } catch (const InputError&) {
      continue;
    }
    // uv, poetry, pdm and pipenv are not in the image: what they run is.
    while (words.size() > 2 && words[1] == "run" &&
           (words[0] == "uv" || words[0] == "poetry" || words[0] == "pdm" || words[0] == "pipenv"))
      words.erase(words.begin(), words.begin() + 2);
    // Only Python or a server gen knows: `docker run`, `mkdocs serve` or
    // `docker compose up` run something else than the image's app.
    const std::string program = words.front().substr(words.front().rfind('/') + 1);
    bool known = program.rfind("python", 0) == 0;
    for (const auto& row : builtin_tables().servers)
      known = known ||
              std::find(row.programs.begin(), row.programs.end(), program) != row.programs.end();
    if (!known) {
      evidence.push_back({where, "the Makefile's " + std::string(wanted) + " target runs " +
                                     program +
                                     ", neither Python nor a server gen knows: not the "
                                     "entrypoint (--cmd gives one)"});
      continue;
    }
    py.cmd = words;
    // A development server's auto-reload watches files that never change
    // in an image.
    py.cmd.erase(std::remove(py.cmd.begin(), py.cmd.end(), "--reload"), py.cmd.end());
    py.cmd_source = where;
    evidence.push_back({where, "entrypoint: the Makefile's " + std::string(wanted) + " target (" +
                                   join(py.cmd, " ") + ")"});
    return true;
  }
  return false;
}

}  // namespace

namespace {

// An app object made by assignment (`app = FastAPI(`, `web = flask.Flask(`):
// group 1 names it. Built on first use, not at start-up.
const std::regex& fastapi_app_pattern() {
  static const std::regex pattern(R"(^\s*([A-Za-z_]\w*)\s*(:[^=]*)?=\s*(fastapi\.)?FastAPI\s*\()");
  return pattern;
}
const std::regex& flask_app_pattern() {
  static const std::regex pattern(R"(^\s*([A-Za-z_]\w*)\s*(:[^=]*)?=\s*(flask\.)?Flask\s*\()");
  return pattern;
}

}  // namespace

namespace {

// A line of code that calls some object's launch() (torch.distributed.launch
// is a module, not a UI), not a comment that mentions one.
bool calls_launch(const std::string& line) {
  const bool comment = line.find_first_not_of(" \t") == line.find('#');
  return !comment && line.find(".launch(") != std::string::npos &&
         line.find("distributed.launch(") == std::string::npos;
}

}  // namespace

bool app_served_by(const fs::path& root, const std::string& candidate, PythonProject& py,
                   std::vector<Evidence>& evidence) {
  const std::regex& kFastApi = fastapi_app_pattern();
  const std::regex& kFlask = flask_app_pattern();
  static const std::regex kStreamlit(R"(^\s*(import|from)\s+streamlit\b)");
  static const std::regex kGradio(R"(^\s*(import|from)\s+gradio\b)");
  const fs::path path = root / candidate;
  if (!regular_or_absent(path)) return false;
  const bool in_src = candidate.rfind("src/", 0) == 0;
  std::string module = in_src ? candidate.substr(4) : candidate;
  module.resize(module.size() - 3);
  std::replace(module.begin(), module.end(), '/', '.');
  const auto src_path = [&] {
    if (in_src && !py.installable) import_from_src(py, candidate, evidence);
  };
  std::vector<std::string> all;
  {
    std::istringstream split(read_text(path));
    for (std::string l; std::getline(split, l);) all.push_back(l);
  }
  // The top-level function the current line is in: an app made inside
  // one (`def create_app(): app = Flask(__name__)`) is that factory's,
  // when the function returns it (a function that makes an app and
  // serves it itself is no factory: A1111's api_only()).
  std::string factory;
  auto factory_returns = [&](std::size_t from, const std::string& app) {
    for (std::size_t k = from; k < all.size(); ++k) {
      const std::string& l = all[k];
      if (!l.empty() && std::string_view(" \t#\r)]}").find(l[0]) == std::string_view::npos)
        return false;  // the function ended
      const auto at = l.find("return ");
      if (at == std::string::npos || l.find_first_not_of(" \t") != at) continue;
      const std::string value(trim(l.substr(at + 7)));
      if (value == app || value.rfind(app + " ", 0) == 0 || value.rfind(app + "#", 0) == 0)
        return true;
    }
    return false;
  };
  for (std::size_t index = 0; index < all.size(); ++index) {
    const std::string& line = all[index];
    const std::size_t number = index + 1;
    // A line at the left margin ends the function, unless it closes the
    // brackets of a signature written over several lines ("):").
    if (!line.empty() && std::string_view(" \t#\r)]}").find(line[0]) == std::string_view::npos) {
      static const std::regex kDef(R"(^(async\s+)?def\s+([A-Za-z_]\w*)\s*\()");
      std::smatch d;
      factory = line.size() < 1000 && std::regex_search(line, d, kDef) ? d[2].str() : "";
    }
    // Only short lines that mention an app are worth a regular expression
    // (libstdc++'s recurses per character).
    if (line.size() > 1000 ||
        (line.find("FastAPI") == std::string::npos && line.find("Flask") == std::string::npos &&
         line.find("streamlit") == std::string::npos && line.find("gradio") == std::string::npos &&
         line.find(".launch(") == std::string::npos))
      continue;
    std::smatch m;
    const std::string where = std::string(candidate) + ":" + std::to_string(number);
    const bool in_factory =
        !factory.empty() && !line.empty() && (line[0] == ' ' || line[0] == '\t');
    if (std::regex_search(line, m, kFastApi)) {
      if (in_factory && !factory_returns(number, m[1].str())) continue;
      py.port = 8000;
      if (in_factory)
        py.cmd = {"uvicorn", module + ":" + factory, "--factory", "--host", "0.0.0.0", "--port",
                  "8000"};
      else
        py.cmd = {"uvicorn", module + ":" + m[1].str(), "--host", "0.0.0.0", "--port", "8000"};
      py.cmd_source = where;
      evidence.push_back({where, "a FastAPI app" +
                                     (in_factory ? " made by " + factory + "()" : std::string()) +
                                     ", served by uvicorn on port 8000"});
      src_path();
      if (!depends_on(py, "uvicorn"))
        evidence.push_back({where,
                            "warning: uvicorn is not among the dependencies; add it, or "
                            "the container will not start"});
      return true;
    }
    if (std::regex_search(line, m, kFlask)) {
      if (in_factory && !factory_returns(number, m[1].str())) continue;
      py.port = 8000;
      // gunicorn and flask --app call a factory named with its "()".
      const std::string target = module + ":" + (in_factory ? factory + "()" : m[1].str());
      if (depends_on(py, "gunicorn")) {
        py.cmd = {"gunicorn", "--bind", "0.0.0.0:8000", target};
        evidence.push_back({where, "a Flask app" +
                                       (in_factory ? " made by " + factory + "()" : std::string()) +
                                       ", served by gunicorn on port 8000"});
      } else {
        // Flask's own server listens on 127.0.0.1 unless told otherwise.
        py.cmd = {"flask", "--app", target, "run", "--host", "0.0.0.0", "--port", "5000"};
        py.port = 5000;
        evidence.push_back({where,
                            "a Flask app on Flask's development server, port 5000 (add gunicorn to "
                            "the dependencies to serve it properly)"});
      }
      py.cmd_source = where;
      src_path();
      return true;
    }
    if (std::regex_search(line, kStreamlit)) {
      // Streamlit binds every interface by default, but saying so keeps
      // the CMD honest; its port is 8501.
      py.port = 8501;
      py.cmd = {"streamlit",
                "run",
                candidate,
                "--server.address=0.0.0.0",
                "--server.port=8501",
                "--server.headless=true"};
      py.cmd_source = where;
      evidence.push_back({where, "a Streamlit app, served by streamlit run on port 8501"});
      src_path();
      return true;
    }
    // A script that launches a UI its project's modules build (fish-speech's
    // tools/run_webui.py: app.launch()) imports no gradio itself; in a
    // project that depends on Gradio, that launch is Gradio's.
    const bool launches_gradio = calls_launch(line) && depends_on(py, "gradio");
    if (launches_gradio || std::regex_search(line, kGradio)) {
      // Gradio's launch() listens on 127.0.0.1 unless GRADIO_SERVER_NAME
      // says otherwise, which no port mapping can reach.
      py.port = 7860;
      py.cmd = {"python", candidate};
      py.env = {"GRADIO_SERVER_NAME=0.0.0.0", "GRADIO_SERVER_PORT=7860"};
      py.cmd_source = where;
      evidence.push_back(
          {where,
           "a Gradio app on port 7860, told by GRADIO_SERVER_NAME to listen on every "
           "interface"});
      src_path();
      return true;
    }
  }
  return false;
}

ServedFiles::ServedFiles(fs::path root, const PythonProject& py)
    : root_(std::move(root)), py_(py) {}

namespace {

ServerKind server_kind_of(const std::vector<std::string>& cmd) {
  if (cmd.empty()) return ServerKind::none;
  if (cmd[0] == "uvicorn") return ServerKind::fastapi;
  if (cmd[0] == "gunicorn" || cmd[0] == "flask") return ServerKind::flask;
  if (cmd[0] == "streamlit") return ServerKind::streamlit;
  return ServerKind::gradio;  // python FILE, with GRADIO_SERVER_NAME
}

// `python file.py` serves a Gradio UI only when launch() runs as the file
// runs: under a __main__ guard, or at the left margin. A launch inside a
// function (FaceFusion's layouts: def run(ui): ui.launch()) is for its
// callers.
bool launches_when_run(const std::string& text) {
  if (has_main_guard(text)) return text.find(".launch(") != std::string::npos;
  for (std::size_t at = text.find(".launch("); at != std::string::npos;
       at = text.find(".launch(", at + 8)) {
    const std::size_t start = text.rfind('\n', at);
    const std::size_t first = start == std::string::npos ? 0 : start + 1;
    if (text[first] != ' ' && text[first] != '\t') return true;
  }
  return false;
}

// The project's own packages, flat or under src/ (parent "" or "src/").
std::vector<std::string> packages_in(const fs::path& root, const std::string& parent) {
  std::vector<std::string> packages;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / parent, ec)) {
    const std::string name = e.path().filename().string();
    std::error_code type_ec;
    if (e.is_directory(type_ec) && name[0] != '.' && kSkippedDirs.count(name) == 0 &&
        name != "app" && !is_test_path(name) &&
        fs::is_regular_file(e.path() / "__init__.py", type_ec))
      packages.push_back(name);
  }
  std::sort(packages.begin(), packages.end());
  return packages;
}

// The files at the top a server's app or a script is looked for in, first
// to last.
const char* const kCandidates[] = {"app/main.py", "main.py",          "app.py",  "server.py",
                                   "serve.py",    "streamlit_app.py", "demo.py", "train.py"};

}  // namespace

const ServedFile& ServedFiles::read(const fs::path& file) {
  const std::string rel = relative_to_root(file, root_);
  const auto found = files_.find(rel);
  if (found != files_.end()) return found->second;
  ServedFile& result = files_[rel];
  PythonProject served = py_;
  std::vector<Evidence> notes;
  if (!app_served_by(root_, rel, served, notes)) return result;
  const ServerKind kind = server_kind_of(served.cmd);
  if (kind == ServerKind::gradio && !launches_when_run(read_text(file))) return result;
  result.kind = kind;
  result.served = std::move(served);
  result.notes = std::move(notes);
  return result;
}

std::vector<std::string> conventional_server_files(const fs::path& root) {
  std::vector<std::string> files(std::begin(kCandidates), std::end(kCandidates));
  // src/svc/main.py is the module svc.main.
  for (const char* parent : {"", "src/"})
    for (const auto& package : packages_in(root, parent))
      for (const char* file : {"main.py", "app.py", "server.py", "api.py"})
        files.push_back(parent + package + "/" + file);
  return files;
}

namespace {

// FastAPI/Flask apps are found by their assignment: `app = FastAPI(`.
EntrypointRule find_entrypoint(const fs::path& root, PythonProject& py,
                               const std::vector<std::pair<std::string, std::string>>& scripts,
                               std::vector<Evidence>& evidence, bool has_dependencies,
                               const std::vector<fs::path>& python_sources,
                               ServedFiles& served_files) {
  if (procfile_command(root, py, evidence)) return EntrypointRule::declared;
  if (!scripts.empty() && !py.installable) {
    // Without a [build-system] nothing installs the script; call its target.
    const std::string& target = scripts.front().second;
    const auto colon = target.find(':');
    const std::string module = target.substr(0, colon);
    const std::string call = colon == std::string::npos ? "" : target.substr(colon + 1);
    py.cmd = {"python", "-c",
              "import " + module + (call.empty() ? "" : "; " + module + "." + call + "()")};
    py.cmd_source = "pyproject.toml scripts";
    // In a src/ layout the package is not importable from the project's
    // root, where the container starts: Python is told to look in src/.
    const std::string top = module.substr(0, module.find('.'));
    std::error_code ec;
    const auto exists = [&](const fs::path& p) { return fs::exists(p, ec); };
    if (!top.empty() && !exists(root / top) && !exists(root / (top + ".py")) &&
        (exists(root / "src" / top) || exists(root / "src" / (top + ".py"))))
      import_from_src(py, "src/" + top, evidence);
    evidence.push_back(
        {"pyproject.toml", "entrypoint: the script '" + scripts.front().first + "' (" + target +
                               "), called directly: without a [build-system] it is not installed"});
    return EntrypointRule::declared;
  }
  if (!scripts.empty()) {
    py.cmd = {scripts.front().first};
    py.cmd_source = "pyproject.toml scripts";
    evidence.push_back(
        {"pyproject.toml",
         "entrypoint: the script '" + scripts.front().first + "'" +
             (scripts.size() > 1
                  ? " (the first of " + std::to_string(scripts.size()) + "; --cmd picks another)"
                  : "")});
    return EntrypointRule::declared;
  }
  if (django_command(root, python_sources, py, evidence)) return EntrypointRule::declared;
  if (ray_serve_command(root, py, evidence)) return EntrypointRule::declared;
  // Every candidate is read for an app a server runs before any is run as a
  // plain script: main.py may be a CLI beside the real server in app.py.
  const std::vector<std::string> candidates = conventional_server_files(root);
  for (const std::string& candidate : candidates)
    if (app_served_by(root, candidate, py, evidence)) return EntrypointRule::server;
  // An app object in any other module of the project (app/webservice.py,
  // api/routes/server_main.py), shallowest first: a server, not a script.
  for (const auto& file : has_dependencies ? python_sources : std::vector<fs::path>{}) {
    const std::string rel = relative_to_root(file, root);
    if (std::find(candidates.begin(), candidates.end(), rel) != candidates.end()) continue;
    // A folder of its own project (services/api with its requirements) is
    // another image's, not this one's. A folder without __init__.py still
    // imports as a namespace package.
    if (in_nested_project(file, root)) continue;
    const ServedFile& app = served_files.read(file);
    if (app.kind == ServerKind::none) continue;
    py = app.served;
    evidence.insert(evidence.end(), app.notes.begin(), app.notes.end());
    return EntrypointRule::server;
  }
  if (makefile_command(root, py, evidence)) return EntrypointRule::declared;
  for (const char* candidate : kCandidates) {
    if (!regular_or_absent(root / candidate)) continue;
    py.cmd = {"python", candidate};
    py.cmd_source = candidate;
    evidence.push_back({candidate, "entrypoint: python " + std::string(candidate)});
    return EntrypointRule::script;
  }
  // A package run as `python -m pkg`, or notebooks served by Jupyter Lab.
  std::vector<std::string> packages;
  std::vector<std::string> notebooks;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    std::error_code type_ec;
    if (e.is_directory(type_ec) && name[0] != '.' && kSkippedDirs.count(name) == 0 &&
        regular_or_absent(e.path() / "__main__.py"))
      packages.push_back(name);
    if (e.path().extension() == ".ipynb" && e.is_regular_file(type_ec)) notebooks.push_back(name);
  }
  std::sort(packages.begin(), packages.end());
  std::sort(notebooks.begin(), notebooks.end());
  if (!packages.empty()) {
    py.cmd = {"python", "-m", packages.front()};
    py.cmd_source = packages.front() + "/__main__.py";
    evidence.push_back({py.cmd_source, "entrypoint: python -m " + packages.front()});
    return EntrypointRule::package;
  }
  // A subpackage run as `python -m pkg.server` (llama_cpp/server/__main__.py),
  // one level down in the project's own packages, a server's name first.
  {
    std::vector<std::string> runnable;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      const std::string name = e.path().filename().string();
      std::error_code type_ec;
      if (!e.is_directory(type_ec) || name[0] == '.' || kSkippedDirs.count(name) != 0 ||
          is_test_path(name) || !regular_or_absent(e.path() / "__init__.py"))
        continue;
      for (const auto& sub : fs::directory_iterator(e.path(), type_ec))
        if (sub.is_directory(type_ec) && regular_or_absent(sub.path() / "__main__.py") &&
            fs::exists(sub.path() / "__main__.py", type_ec))
          runnable.push_back(name + "." + sub.path().filename().string());
    }
    std::sort(runnable.begin(), runnable.end(), [](const std::string& a, const std::string& b) {
      auto rank = [](const std::string& m) {
        const std::string last = m.substr(m.rfind('.') + 1);
        return last == "server" || last == "serve" || last == "api" || last == "app" ? 0 : 1;
      };
      return std::make_pair(rank(a), a) < std::make_pair(rank(b), b);
    });
    if (!runnable.empty()) {
      py.cmd = {"python", "-m", runnable.front()};
      py.cmd_source = runnable.front().substr(0, runnable.front().find('.')) + "/" +
                      runnable.front().substr(runnable.front().find('.') + 1) + "/__main__.py";
      evidence.push_back({py.cmd_source, "entrypoint: python -m " + runnable.front() +
                                             (runnable.size() > 1 ? " (of " + join(runnable, ", ") +
                                                                        "; --cmd picks another)"
                                                                  : std::string())});
      return EntrypointRule::package;
    }
  }
  // A script by a conventional name, or the one script at the top, of a
  // project whose dependency files say it is Python (a CMake project's
  // helper script is no entrypoint).
  if (has_dependencies && packages.empty() && notebooks.empty()) {
    std::vector<std::string> scripts_at_top;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      const std::string name = e.path().filename().string();
      std::error_code type_ec;
      if (e.path().extension() == ".py" && e.is_regular_file(type_ec) && !helper_script(name))
        scripts_at_top.push_back(name);
    }
    std::sort(scripts_at_top.begin(), scripts_at_top.end());
    std::string chosen;
    for (const char* conventional : {"run.py", "start.py", "predict.py", "inference.py", "infer.py",
                                     "worker.py", "bot.py", "cli.py"})
      if (chosen.empty() && std::find(scripts_at_top.begin(), scripts_at_top.end(), conventional) !=
                                scripts_at_top.end())
        chosen = conventional;
    std::string why = "a script by a conventional name";
    if (chosen.empty() && scripts_at_top.size() == 1) {
      chosen = scripts_at_top.front();
      why = "the one script at the top";
    }
    // The one script at the top that starts a server itself (A1111's
    // webui.py: create_ui().launch()), or else the one named after the
    // project's own package (facefusion.py beside facefusion/).
    if (chosen.empty()) {
      std::vector<std::string> starting, named_after_package;
      for (const auto& name : scripts_at_top) {
        const std::string text = read_text(root / name);
        for (const char* call : {".launch(", "uvicorn.run(", "app.run(", "web.run_app(",
                                 "serve_forever(", ".serve(", "run_simple("})
          if (text.find(call) != std::string::npos) {
            starting.push_back(name);
            break;
          }
        const std::string stem = name.substr(0, name.size() - 3);
        std::error_code type_ec;
        if (fs::is_regular_file(root / stem / "__init__.py", type_ec))
          named_after_package.push_back(name);
      }
      if (starting.size() == 1) {
        chosen = starting.front();
        why = "the one script at the top that starts a server";
      } else if (named_after_package.size() == 1) {
        chosen = named_after_package.front();
        why = "the script named after the project's package";
      }
    }
    if (!chosen.empty()) {
      py.cmd = {"python", chosen};
      py.cmd_source = chosen;
      evidence.push_back({chosen, "entrypoint: python " + chosen + " (" + why + ")"});
      return EntrypointRule::script;
    }
  }
  // A training or serving script in the folders repositories keep them in
  // (detectron2's tools/train_net.py): a guess among the project's scripts,
  // so a warning says which and how to choose.
  if (has_dependencies && notebooks.empty()) {
    for (const char* path :
         {"tools/train_net.py", "tools/train.py", "scripts/train.py", "tools/serve.py",
          "scripts/serve.py", "demo/app.py", "demo/demo.py", "scripts/run.py"}) {
      if (!fs::exists(root / path, ec) || !regular_or_absent(root / path)) continue;
      py.cmd = {"python", path};
      py.cmd_source = path;
      evidence.push_back({path, "warning: no entrypoint at the top; gen runs python " +
                                    std::string(path) +
                                    ", a script where repositories keep them (--cmd picks "
                                    "another)"});
      return EntrypointRule::script;
    }
  }
  if (!notebooks.empty()) {
    py.port = 8888;
    py.cmd = {"jupyter", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser"};
    py.cmd_source = notebooks.front();
    evidence.push_back(
        {notebooks.front(), std::to_string(notebooks.size()) +
                                " notebook(s): Jupyter Lab on port 8888 (its login token is in the "
                                "container's log)"});
    if (!depends_on(py, "jupyterlab") && !depends_on(py, "jupyter"))
      evidence.push_back({notebooks.front(),
                          "warning: jupyterlab is not among the dependencies; add it, or the "
                          "container will not start"});
  }
  return notebooks.empty() ? EntrypointRule::none : EntrypointRule::notebooks;
}

// A script that hands its command line to Lightning's LightningCLI stops
// with "expected one of fit, validate, test, predict" when given none:
// `python main.py` becomes `python main.py fit`, said so. A CLI made with
// run=False parses its own arguments, and is left as it is.
void lightning_subcommand(const fs::path& root, PythonProject& py,
                          std::vector<Evidence>& evidence) {
  if (py.cmd.size() != 2 || py.cmd[0].rfind("python", 0) != 0 ||
      !regular_or_absent(root / py.cmd[1]))
    return;
  // Plain searches: libstdc++'s regex recurses per character of a file.
  std::istringstream lines(read_text(root / py.cmd[1]));
  std::string line;
  bool called = false, no_run = false, in_string = false;
  while (std::getline(lines, line)) {
    for (auto at = line.find("\"\"\""); at != std::string::npos; at = line.find("\"\"\"", at + 3))
      in_string = !in_string;
    const auto code = line.find_first_not_of(" \t");
    if (in_string || code == std::string::npos || line[code] == '#') continue;
    const std::string text = line.substr(0, line.find('#'));
    for (auto at = text.find("LightningCLI"); at != std::string::npos && !called;
         at = text.find("LightningCLI", at + 1)) {
      auto next = at + 12;
      while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) ++next;
      called = next < text.size() && text[next] == '(';
    }
    no_run = no_run || text.find("run=False") != std::string::npos ||
             text.find("run = False") != std::string::npos;
  }
  if (!called || no_run) return;
  py.cmd.push_back("fit");
  evidence.push_back({py.cmd[1], "a LightningCLI script: it runs as `python " + py.cmd[1] +
                                     " fit` (--cmd picks validate, test or predict, and a "
                                     "--config)"});
}

// A server started by the entry script's own call: uvicorn.run(...), a Flask
// app's .run(...), Gradio's .launch(...), aiohttp's web.run_app(...).
struct ServerCall {
  const char* name;        // as said to the user
  const char* port_key;    // its port argument
  const char* host_key;    // its address argument
  int default_port;        // without one
  bool loopback_default;   // it binds 127.0.0.1 unless told otherwise
  const char* listen_env;  // KEY=VALUE that makes it listen everywhere, "" none
};

// An argument's value in a call's text: `key=value` up to the next top-level
// comma or the call's end; "" when the call has none.
std::string keyword_value(const std::string& call, const std::string& key) {
  const std::regex kKey("(^|[(,\\s])" + key + "\\s*=\\s*");
  std::smatch m;
  if (!std::regex_search(call, m, kKey)) return "";
  std::string value;
  int depth = 0;
  for (std::size_t i = static_cast<std::size_t>(m.position(0) + m.length(0)); i < call.size();
       ++i) {
    const char c = call[i];
    if (depth == 0 && (c == ',' || c == ')')) break;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    value += c;
  }
  return std::string(trim(value));
}

// A port written as a number, or as the default of an environment lookup
// (`int(os.environ.get("PORT", 8000))`, `os.getenv("PORT", "7860")`): 0 when
// gen cannot read one.
int literal_port(const std::string& value) {
  static const std::regex kNumber(R"(^\d{1,5}$)");
  static const std::regex kLookup(
      R"(^(int\s*\(\s*)?os\.(environ\.get|getenv)\s*\(\s*["'][A-Z_]+["']\s*,\s*["']?(\d{1,5})["']?\s*\)\s*\)?$)");
  std::smatch m;
  int port = 0;
  if (value.size() > 200) return 0;  // libstdc++'s regex recurses per character
  if (std::regex_match(value, kNumber))
    port = std::stoi(value);
  else if (std::regex_match(value, m, kLookup))
    port = std::stoi(m[3].str());
  return port > 0 && port < 65536 ? port : 0;
}

// The options that set a server's port and its address, by their long
// name (dashes and underscores alike), the likeliest first: a script with
// --listen-port and --server-port (a proxy: the server it forwards to)
// listens on the first. `--master-port` and the like (a distributed
// launch's rendezvous) are no server's port; `--worker-address`,
// `--server-host` and `--controller-address` name another process.
const std::vector<std::string> kPortOptions = {
    "port", "listen-port", "server-port", "http-port", "api-port", "web-port", "service-port"};
const std::vector<std::string> kHostOptions = {
    "host", "listen",  "listen-host", "listen-address", "bind",     "bind-address",
    "ip",   "address", "server-name", "http-host",      "api-host", "web-host"};

// An option's long name: "--server_port" -> "server-port".
std::string option_name(const ScriptOption& option) {
  for (const auto& flag : option.flags)
    if (flag.rfind("--", 0) == 0) {
      std::string name = flag.substr(2);
      std::replace(name.begin(), name.end(), '_', '-');
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      return name;
    }
  return "";
}

// The option the script has by the likeliest of these names, or nullptr.
const ScriptOption* option_by_name(const std::vector<ScriptOption>& options,
                                   const std::vector<std::string>& names) {
  for (const auto& name : names)
    for (const auto& option : options)
      if (option_name(option) == name) return &option;
  return nullptr;
}

// The option a call's argument reads (`args.port`, `opt.server_name`,
// `FLAGS.port`, or `port`: a Typer or Fire function's parameter), or nullptr.
const ScriptOption* option_named_by(const std::vector<ScriptOption>& options,
                                    const std::string& value) {
  static const std::regex kAttribute(R"(^(?:[A-Za-z_][\w.]*\.)?([A-Za-z_]\w*)$)");
  std::smatch m;
  if (value.size() > 200 || !std::regex_match(value, m, kAttribute)) return nullptr;
  for (const auto& option : options)
    if (option.dest == m[1].str()) return &option;
  return nullptr;
}

// A value's text without its quotes: "'127.0.0.1'" -> "127.0.0.1".
std::string unquoted(const std::string& value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front())
    return value.substr(1, value.size() - 2);
  return value;
}

// HOST:PORT split where the value is one ("127.0.0.1:8080" -> {"127.0.0.1",
// ":8080"}); {value, ""} otherwise (an IPv6 address has more colons).
std::pair<std::string, std::string> host_and_port(const std::string& value) {
  const auto colon = value.find(':');
  if (colon == std::string::npos || colon != value.rfind(':') ||
      literal_port(value.substr(colon + 1)) == 0)
    return {value, ""};
  return {value.substr(0, colon), value.substr(colon)};
}

// The port an option's default gives: a number, an environment lookup with
// a default, or HOST:PORT (fish-speech's `--listen 127.0.0.1:8080`); 0 when
// none can be read.
int option_port(const ScriptOption& option) {
  const std::string value = unquoted(option.default_value);
  if (const int port = literal_port(value); port != 0) return port;
  const std::string port = host_and_port(value).second;
  return port.empty() ? 0 : literal_port(port.substr(1));
}

void set_port(PythonProject& py, int port, bool gradio_guess) {
  py.port = port;
  if (gradio_guess)
    std::replace(py.env.begin(), py.env.end(), std::string("GRADIO_SERVER_PORT=7860"),
                 "GRADIO_SERVER_PORT=" + std::to_string(port));
}

// An address option that keeps the server on the loopback interface by
// default is given on the command line: `--host 0.0.0.0`, `--listen` when
// its bare form listens everywhere (argparse's const, or a store_true
// switch named listen), `--listen 0.0.0.0:PORT` for HOST:PORT. An address
// gen cannot read is said.
void listen_everywhere(const ScriptOption& option, PythonProject& py,
                       std::vector<Evidence>& evidence) {
  const std::string flag = option.flags.front();
  for (const auto& word : py.cmd)
    if (std::find(option.flags.begin(), option.flags.end(), word.substr(0, word.find('='))) !=
        option.flags.end())
      return;  // the command gives it already
  const std::string value = unquoted(option.default_value);
  const auto [host, port] = host_and_port(value);
  const bool loopback = host == "127.0.0.1" || host == "localhost" || host == "::1";
  if (option.action == "store_true") {
    if (option_name(option) != "listen") return;
    py.cmd.push_back(flag);
    evidence.push_back({option.where, "the script listens on every interface only with " + flag +
                                          " (a switch, off by default): the command turns it on"});
    return;
  }
  if (!loopback) return;
  const std::string everywhere = unquoted(option.const_value);
  if (!everywhere.empty() && everywhere.rfind("127.", 0) != 0 && everywhere != "localhost") {
    py.cmd.push_back(flag);
  } else {
    py.cmd.push_back(flag);
    py.cmd.push_back("0.0.0.0" + port);
  }
  evidence.push_back(
      {option.where, "the script's " + flag + " defaults to " + value +
                         ", which no port mapping reaches from outside the "
                         "container: the command passes " +
                         (py.cmd.back() == flag ? flag : flag + " " + py.cmd.back())});
}

// The entry script (`python app.py`, or a package's __main__.py run as
// `python -m pkg`) that starts a server itself: its port and address, read
// from the call where they are written plainly, said where they are not.
void script_server_call(const fs::path& root, PythonProject& py, std::vector<Evidence>& evidence) {
  // A Gradio script gen found by its import gets Gradio's default port
  // through the environment; a port its launch() names wins over that.
  const bool gradio_guess = py.port == 7860 && std::find(py.env.begin(), py.env.end(),
                                                         "GRADIO_SERVER_PORT=7860") != py.env.end();
  if ((py.port != 0 && !gradio_guess) || py.cmd.size() < 2 || py.cmd[0].rfind("python", 0) != 0)
    return;
  std::string file;
  if (py.cmd.size() == 2 && py.cmd[1].size() > 3 &&
      py.cmd[1].compare(py.cmd[1].size() - 3, 3, ".py") == 0)
    file = py.cmd[1];
  else if (py.cmd.size() == 3 && py.cmd[1] == "-m") {
    std::string module = py.cmd[2];
    std::replace(module.begin(), module.end(), '.', '/');
    std::error_code ec;
    file = fs::is_regular_file(root / module / "__main__.py", ec) ? module + "/__main__.py"
                                                                  : module + ".py";
  }
  if (file.empty() || !regular_or_absent(root / file)) return;
  const ScriptOptions found = script_options(root, file);
  const std::vector<ScriptOption>& options = found.options;
  static const ServerCall kUvicorn{"uvicorn.run", "port", "host", 8000, true, ""};
  static const ServerCall kFlask{"Flask's app.run", "port", "host", 5000, true, ""};
  static const ServerCall kGradio{
      "Gradio's launch()", "server_port", "server_name", 7860, true, "GRADIO_SERVER_NAME=0.0.0.0"};
  static const ServerCall kAiohttp{"aiohttp's web.run_app", "port", "host", 8080, false, ""};
  const std::string text = read_text(root / file);
  std::istringstream lines(text);
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) all.push_back(line);
  // A script that launches a UI its project's modules build (A1111's
  // webui.py: ui.create_ui().launch()) imports no gradio itself: a project
  // that depends on Gradio launches Gradio.
  bool gradio = depends_on(py, "gradio"), flask = false;
  std::set<std::string> flask_apps;
  for (const auto& line : all) {
    if (line.size() > 1000) continue;
    gradio = gradio || line.rfind("import gradio", 0) == 0 || line.rfind("from gradio", 0) == 0;
    flask = flask || line.rfind("from flask", 0) == 0 || line.rfind("import flask", 0) == 0;
    std::smatch m;
    if (flask && line.find("Flask") != std::string::npos &&
        std::regex_search(line, m, flask_app_pattern()))
      flask_apps.insert(m[1].str());
  }
  for (std::size_t n = 0; n < all.size(); ++n) {
    const std::string& line = all[n];
    const auto code = line.find_first_not_of(" \t");
    if (line.size() > 1000 || code == std::string::npos || line[code] == '#') continue;
    const ServerCall* kind = nullptr;
    std::size_t open = std::string::npos;
    if (const auto at = line.find("uvicorn.run("); at != std::string::npos) {
      kind = &kUvicorn;
      open = at + 11;
    } else if (const auto at = line.find("web.run_app("); at != std::string::npos) {
      kind = &kAiohttp;
      open = at + 11;
    } else if (const auto at = line.find(".launch("); gradio && at != std::string::npos) {
      kind = &kGradio;
      open = at + 7;
    } else if (const auto at = line.find(".run("); !flask_apps.empty() && at != std::string::npos) {
      auto start = at;
      while (start > 0 && (std::isalnum(static_cast<unsigned char>(line[start - 1])) != 0 ||
                           line[start - 1] == '_'))
        --start;
      if (flask_apps.count(line.substr(start, at - start)) != 0) {
        kind = &kFlask;
        open = at + 4;
      }
    }
    if (kind == nullptr || (gradio_guess && kind != &kGradio)) continue;
    const std::string call = call_text(all, n, open);
    const std::string where = file + ":" + std::to_string(n + 1);
    const std::string port_value = keyword_value(call, kind->port_key);
    const std::string host_value = keyword_value(call, kind->host_key);
    // `port=args.port`: the value the script's option gives by default.
    const ScriptOption* port_option = option_named_by(options, port_value);
    int port = port_value.empty() ? kind->default_port : literal_port(port_value);
    // argparse gives None for an option without a default, and a server
    // told None takes its own default.
    const bool port_none = port_option != nullptr && (port_option->default_value.empty() ||
                                                      port_option->default_value == "None");
    if (port == 0 && port_option != nullptr)
      port = port_none ? kind->default_port : option_port(*port_option);
    if (port != 0) {
      set_port(py, port, gradio_guess);
      evidence.push_back(
          {where,
           std::string(kind->name) + " listens on port " + std::to_string(port) +
               (port_value.empty() ? " (its default)"
                                   : " (" + std::string(kind->port_key) + "=" + port_value +
                                         (port_option != nullptr
                                              ? ", the default of " + port_option->flags.front() +
                                                    " at " + port_option->where +
                                                    (port_none ? " is None: the server's own" : "")
                                              : std::string()) +
                                         ")")});
    } else {
      py.port_said = true;
      evidence.push_back({where, "warning: " + std::string(kind->name) + "'s port is " +
                                     port_value + ", which gen cannot read: " +
                                     (gradio_guess ? "it wins over GRADIO_SERVER_PORT=7860, "
                                                     "which the image publishes"
                                                   : "the image publishes no port") +
                                     "; pass --port with the one it listens on"});
    }
    // `host=args.host`: the option's default, and the option turns it; an
    // expression over the script's address options (`None if not
    // args.listen else ...`) is turned by the first it names.
    const ScriptOption* host_option = option_named_by(options, host_value);
    for (const auto& option : options) {
      if (host_option != nullptr || host_value.size() > 500) break;
      if (std::find(kHostOptions.begin(), kHostOptions.end(), option_name(option)) ==
          kHostOptions.end())
        continue;
      // The option's name as a word: `args.listen`, or a Typer parameter's `listen`.
      const auto word_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
      };
      const std::string& mention = option.dest;
      for (auto at = host_value.find(mention);
           !mention.empty() && at != std::string::npos && host_option == nullptr;
           at = host_value.find(mention, at + 1)) {
        const auto end = at + mention.size();
        if ((at == 0 || !word_char(host_value[at - 1])) &&
            (end == host_value.size() || !word_char(host_value[end])))
          host_option = &option;
      }
    }
    if (host_option != nullptr) {
      listen_everywhere(*host_option, py, evidence);
      return;
    }
    const std::string host = unquoted(host_value);
    const bool loopback =
        host_value.empty() ? kind->loopback_default : host == "127.0.0.1" || host == "localhost";
    if (loopback && host_value.empty() && gradio_guess) {
      // GRADIO_SERVER_NAME is set already.
    } else if (loopback && host_value.empty() && *kind->listen_env != '\0') {
      py.env.emplace_back(kind->listen_env);
      evidence.push_back({where, std::string(kind->name) + " binds 127.0.0.1 by default: " +
                                     kind->listen_env + " makes it listen on every interface"});
    } else if (loopback) {
      evidence.push_back(
          {where, "warning: " + std::string(kind->name) + " listens on 127.0.0.1 only (" +
                      (host_value.empty() ? "its default"
                                          : std::string(kind->host_key) + "=" + host_value) +
                      "), which no port mapping reaches from outside the container: give it " +
                      kind->host_key + "=\"0.0.0.0\""});
    }
    return;
  }
  // No server call gen knows (a server of the project's own, or one started
  // in a module it imports): the script's options say where it listens, when
  // those files import a server framework at all (a worker's --host and
  // --port are as likely the database it connects to).
  if (found.server_import.empty()) return;
  const ScriptOption* port_option = option_by_name(options, kPortOptions);
  const ScriptOption* host_option = option_by_name(options, kHostOptions);
  int port = port_option != nullptr ? option_port(*port_option) : 0;
  if (port == 0 && host_option != nullptr) port = option_port(*host_option);  // --listen HOST:PORT
  if (port != 0) {
    set_port(py, port, gradio_guess);
    const ScriptOption& from =
        port_option != nullptr && option_port(*port_option) != 0 ? *port_option : *host_option;
    evidence.push_back({from.where, "the script's " + from.flags.front() +
                                        " option: it listens on port " + std::to_string(port) +
                                        " by default (it serves with " + found.server_import +
                                        ")"});
  } else if (port_option != nullptr && !gradio_guess) {
    py.port_said = true;
    evidence.push_back(
        {port_option->where,
         "warning: the script takes " + port_option->flags.front() +
             (port_option->default_value.empty() || port_option->default_value == "None"
                  ? " without a default"
                  : " with a default gen cannot read (" + port_option->default_value + ")") +
             ", so gen cannot tell the port it listens on and the image "
             "publishes none; pass --port, or --cmd with the port"});
  }
  if (host_option != nullptr) listen_everywhere(*host_option, py, evidence);
}

}  // namespace

void detect_entrypoint(const fs::path& root, PythonProject& py,
                       const std::vector<std::pair<std::string, std::string>>& scripts,
                       std::vector<Evidence>& evidence, bool has_dependencies,
                       const std::vector<fs::path>& python_sources) {
  ServedFiles served_files(root, py);
  const EntrypointRule rule =
      find_entrypoint(root, py, scripts, evidence, has_dependencies, python_sources, served_files);
  warn_other_entrypoints(root, rule, py, python_sources, served_files, evidence);
  find_task_workers(root, py, python_sources, evidence);
  lightning_subcommand(root, py, evidence);
  script_server_call(root, py, evidence);
}

std::string read_python_version_file(const fs::path& root) {
  const fs::path path = root / ".python-version";
  if (!regular_or_absent(path)) return "";
  std::string text(trim(read_text(path)));
  const auto newline = text.find('\n');
  if (newline != std::string::npos) text = trim(text.substr(0, newline));
  if (const auto dash = text.rfind('-'); dash != std::string::npos) text = text.substr(dash + 1);
  return major_minor(text);
}

}  // namespace imgsmith::gen
