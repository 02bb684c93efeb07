// Project detection: what a directory holds and what it will need from an
// image. Every conclusion is recorded with the file (and line) it came from,
// so `--explain` can show the reasoning and a wrong guess can be traced.
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include "gen_internal.hpp"
#include "imgsmith/error.hpp"
#include "imgsmith/gen.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;
namespace {

// Directories that never hold the project's own sources.
const std::set<std::string> kSkippedDirs = {".git", ".hg", ".svn", ".venv", "venv", "env",
                                            "node_modules", "__pycache__", ".imgsmith", "build",
                                            "dist", ".tox", ".mypy_cache", ".pytest_cache",
                                            "site-packages"};
constexpr int kMaxDepth = 8;
constexpr std::size_t kMaxEntries = 50000;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path.string() + ": cannot read it (" + std::strerror(errno) +
                     "); fix its permissions, or run gen where it can be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string relative_to_root(const fs::path& path, const fs::path& root) {
  return path.lexically_relative(root).generic_string();
}

bool is_test_path(const std::string& rel) {
  for (const auto& part : split(rel, "/"))
    if (part == "test" || part == "tests" || part == "testing" || part == "examples" ||
        part == "benchmarks")
      return true;
  return false;
}

std::string image_name(const fs::path& dir) {
  std::string raw = fs::weakly_canonical(dir).filename().string();
  std::string out;
  for (char c : raw) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(l)) || l == '.' || l == '_' || l == '-')
      out += l;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  // Docker allows one separator between alphanumerics ("a..b" is no name).
  std::string collapsed;
  for (char c : out) {
    const bool sep = c == '.' || c == '_' || c == '-';
    if (sep && !collapsed.empty() && (collapsed.back() == '.' || collapsed.back() == '_' || collapsed.back() == '-')) {
      collapsed.back() = '-';
      continue;
    }
    collapsed += c;
  }
  out = collapsed;
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.front()))) out.erase(0, 1);
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out.empty() ? "app" : out;
}

struct Walk {
  std::vector<fs::path> cuda_sources;  // *.cu, *.cuh
  std::vector<fs::path> cpp_sources;   // *.cpp, *.cc, *.cxx
  std::vector<fs::path> cmake_lists;   // every CMakeLists.txt, top first
  bool truncated = false;
};

Walk walk_project(const fs::path& root) {
  Walk w;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec)
    throw InputError(root.string() + ": cannot read the directory (" + ec.message() +
                     "); check its permissions");
  std::size_t seen = 0;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (++seen > kMaxEntries) {
      w.truncated = true;
      break;
    }
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    std::error_code type_ec;
    if (it->is_directory(type_ec)) {
      if (it.depth() >= kMaxDepth || kSkippedDirs.count(name) != 0 ||
          (name.size() > 1 && name[0] == '.') || name.rfind("cmake-build-", 0) == 0)
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(type_ec)) continue;
    const std::string ext = p.extension().string();
    if (ext == ".cu" || ext == ".cuh") w.cuda_sources.push_back(p);
    if (ext == ".cpp" || ext == ".cc" || ext == ".cxx") w.cpp_sources.push_back(p);
    if (name == "CMakeLists.txt") w.cmake_lists.push_back(p);
  }
  auto by_path = [&](const fs::path& a, const fs::path& b) {
    const auto da = std::distance(a.begin(), a.end());
    const auto db = std::distance(b.begin(), b.end());
    return da != db ? da < db : a < b;
  };
  std::sort(w.cuda_sources.begin(), w.cuda_sources.end(), by_path);
  std::sort(w.cpp_sources.begin(), w.cpp_sources.end(), by_path);
  std::sort(w.cmake_lists.begin(), w.cmake_lists.end(), by_path);
  return w;
}

// ----- Python -----------------------------------------------------------

// requirements-dev.txt, requirements_test.txt, requirements.lint.txt: whole
// words only, so requirements-docker.txt or -device.txt still count.
bool is_dev_requirements(const std::string& name) {
  static const std::set<std::string> kDevWords = {"dev", "develop", "development", "test", "tests", "testing",
                                                  "lint", "docs", "doc", "ci", "typing", "types", "bench"};
  std::string word;
  for (char c : name + ".") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (kDevWords.count(word) != 0) return true;
    word.clear();
  }
  return false;
}

class RequirementsReader {
 public:
  RequirementsReader(const fs::path& root, PythonProject& py, std::vector<Evidence>& evidence)
      : root_(root), py_(py), evidence_(evidence) {}

  void read(const std::string& rel, int depth) {
    if (depth > 10 || !visited_.insert(rel).second) return;
    const fs::path path = root_ / rel;
    if (!fs::is_regular_file(path))
      throw InputError(path.string() + ": named by -r but missing; fix the include or create it");
    py_.requirement_files.push_back(rel);
    std::istringstream lines(read_text(path));
    std::string line;
    std::string logical;
    int number = 0;
    int first = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (logical.empty()) first = number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty() && line.back() == '\\') {  // continuation
        logical += line.substr(0, line.size() - 1);
        continue;
      }
      logical += line;
      handle(std::string(trim(logical)), rel, first, depth);
      logical.clear();
    }
    if (!logical.empty()) handle(std::string(trim(logical)), rel, first, depth);
  }

 private:
  void handle(const std::string& line, const std::string& rel, int number, int depth) {
    const std::string where = rel + ":" + std::to_string(number);
    if (line.empty() || line[0] == '#') return;
    if (line[0] == '-') {
      const auto space = line.find_first_of(" =");
      const std::string flag = line.substr(0, space);
      const std::string value = space == std::string::npos ? "" : std::string(trim(line.substr(space + 1)));
      if (flag == "-r" || flag == "--requirement" || flag == "-c" || flag == "--constraint") {
        const std::string inc = (fs::path(rel).parent_path() / value).lexically_normal().generic_string();
        evidence_.push_back({where, "includes " + inc});
        read(inc, depth + 1);
      } else if (flag == "-e" || flag == "--editable") {
        py_.requirements_need_source = true;
        evidence_.push_back({where, "installs " + value + " from the source tree, so the code is "
                                    "copied before the dependencies are installed"});
      } else if (flag == "-i" || flag == "--index-url" || flag == "--extra-index-url" ||
                 flag == "-f" || flag == "--find-links") {
        py_.index_options.push_back(flag + " " + value);
        evidence_.push_back({where, "package index option " + flag + " " + value});
      }
      return;
    }
    if (line[0] == '.' || line[0] == '/') {
      py_.requirements_need_source = true;
      evidence_.push_back({where, "installs the local path " + line + ", so the code is copied "
                                  "before the dependencies are installed"});
      return;
    }
    if (auto r = parse_requirement(line, where)) py_.requirements.push_back(*r);
  }

  fs::path root_;
  PythonProject& py_;
  std::vector<Evidence>& evidence_;
  std::set<std::string> visited_;
};

std::string toml_error(const fs::path& path, const toml::parse_error& e) {
  return path.string() + ":" + std::to_string(e.source().begin.line) + ": not valid TOML (" +
         std::string(e.description()) + "); fix the file";
}

toml::table parse_toml(const fs::path& path) {
  const std::string text = read_text(path);
  try {
    return toml::parse(text, path.string());
  } catch (const toml::parse_error& e) {
    throw InputError(toml_error(path, e));
  }
}

// Poetry writes dependencies as a table: name = "^1.2" or { version = ... }.
std::string poetry_specifier(const toml::node& value) {
  std::string v;
  if (const auto* s = value.as_string()) v = s->get();
  if (const auto* t = value.as_table())
    if (const auto* s = (*t)["version"].as_string()) v = s->get();
  if (v == "*" || v.empty()) return "";
  if (std::isdigit(static_cast<unsigned char>(v[0]))) return "==" + v;
  return poetry_to_pep440(v);
}

// Returns false when the file only configures tools ([tool.black]...), as
// C++ projects' pyproject.toml files often do: that is no Python project.
bool read_pyproject(const fs::path& root, PythonProject& py, std::vector<Evidence>& evidence,
                    std::vector<std::pair<std::string, std::string>>& scripts, bool use_deps) {
  const fs::path path = root / "pyproject.toml";
  const toml::table doc = parse_toml(path);
  if (!doc.contains("project") && !doc.contains("build-system") && !doc["tool"]["poetry"]) return false;
  if (doc.contains("build-system")) py.installable = true;
  if (const auto* project = doc["project"].as_table()) {
    if (const auto* deps = (*project)["dependencies"].as_array()) {
      for (std::size_t i = 0; i < deps->size(); ++i)
        if (const auto* s = deps->get(i)->as_string())
          if (auto r = parse_requirement(s->get(), "pyproject.toml [project] dependencies"))
            if (use_deps) py.requirements.push_back(*r);
    }
    if (const auto* rp = (*project)["requires-python"].as_string()) {
      py.python_constraint = rp->get();
      py.python_constraint_source = "pyproject.toml requires-python";
    }
    if (const auto* s = (*project)["scripts"].as_table())
      for (const auto& [name, target] : *s)
        scripts.emplace_back(std::string(name.str()), target.is_string() ? target.as_string()->get() : std::string());
  }
  if (const auto* poetry = doc["tool"]["poetry"].as_table()) {
    const auto* mode = (*poetry)["package-mode"].as_boolean();
    py.installable = mode == nullptr || mode->get();
    evidence.push_back({"pyproject.toml", "a Poetry project"});
    if (const auto* deps = (*poetry)["dependencies"].as_table())
      for (const auto& [name, value] : *deps) {
        const std::string spec = poetry_specifier(value);
        if (name.str() == "python") {
          if (py.python_constraint.empty()) {
            py.python_constraint = spec;
            py.python_constraint_source = "pyproject.toml [tool.poetry.dependencies] python";
          }
          continue;
        }
        Requirement r;
        r.name = normalise_name(std::string(name.str()));
        r.specifier = spec;
        r.source = "pyproject.toml [tool.poetry.dependencies]";
        if (const auto* t = value.as_table())
          if (const auto* extras = (*t)["extras"].as_array())
            for (std::size_t i = 0; i < extras->size(); ++i)
              if (const auto* e = extras->get(i)->as_string()) r.extras.push_back(normalise_name(e->get()));
        r.text = r.name + (r.extras.empty() ? "" : "[" + join(r.extras, ",") + "]") + r.specifier;
        if (use_deps) py.requirements.push_back(r);
      }
    if (const auto* s = (*poetry)["scripts"].as_table())
      for (const auto& [name, target] : *s)
        scripts.emplace_back(std::string(name.str()), target.is_string() ? target.as_string()->get() : std::string());
  }
  return true;
}

// A lock file lists every package with its exact version, transitive ones
// included, which is the best evidence of what the image will hold.
void read_lock(const fs::path& root, const std::string& lock, PythonProject& py) {
  const toml::table doc = parse_toml(root / lock);
  py.requirements.clear();
  if (const auto* packages = doc["package"].as_array())
    for (std::size_t i = 0; i < packages->size(); ++i) {
      const auto* p = packages->get(i)->as_table();
      if (p == nullptr) continue;
      const auto* name = (*p)["name"].as_string();
      const auto* version = (*p)["version"].as_string();
      if (name == nullptr) continue;
      Requirement r;
      r.name = normalise_name(name->get());
      r.specifier = version != nullptr ? "==" + version->get() : "";
      r.text = r.name + r.specifier;
      r.source = lock;
      py.requirements.push_back(r);
    }
}

bool depends_on(const PythonProject& py, const std::string& name) {
  for (const auto& r : py.requirements)
    if (r.name == name) return true;
  return false;
}

// FastAPI/Flask apps are found by their assignment: `app = FastAPI(`.
void detect_entrypoint(const fs::path& root, PythonProject& py, const std::vector<std::pair<std::string, std::string>>& scripts,
                       std::vector<Evidence>& evidence) {
  if (!scripts.empty() && !py.installable) {
    // Without a [build-system] nothing installs the script; call its target.
    const std::string& target = scripts.front().second;
    const auto colon = target.find(':');
    const std::string module = target.substr(0, colon);
    const std::string call = colon == std::string::npos ? "" : target.substr(colon + 1);
    py.cmd = {"python", "-c", "import " + module + (call.empty() ? "" : "; " + module + "." + call + "()")};
    py.cmd_source = "pyproject.toml scripts";
    evidence.push_back({"pyproject.toml", "entrypoint: the script '" + scripts.front().first + "' (" + target +
                                              "), called directly: without a [build-system] it is not installed"});
    return;
  }
  if (!scripts.empty()) {
    py.cmd = {scripts.front().first};
    py.cmd_source = "pyproject.toml scripts";
    evidence.push_back({"pyproject.toml", "entrypoint: the script '" + scripts.front().first + "'" +
                                              (scripts.size() > 1 ? " (the first of " +
                                                                        std::to_string(scripts.size()) +
                                                                        "; --cmd picks another)"
                                                                  : "")});
    return;
  }
  static const std::regex kFastApi(R"(^\s*([A-Za-z_]\w*)\s*(:[^=]*)?=\s*(fastapi\.)?FastAPI\s*\()");
  static const std::regex kFlask(R"(^\s*([A-Za-z_]\w*)\s*(:[^=]*)?=\s*(flask\.)?Flask\s*\()");
  for (const char* candidate : {"app/main.py", "main.py", "app.py", "server.py", "serve.py"}) {
    const fs::path path = root / candidate;
    if (!fs::is_regular_file(path)) continue;
    std::string module = candidate;
    module.resize(module.size() - 3);
    std::replace(module.begin(), module.end(), '/', '.');
    std::istringstream lines(read_text(path));
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      // Only short lines that mention an app are worth a regular expression
      // (libstdc++'s recurses per character).
      if (line.size() > 1000 || (line.find("FastAPI") == std::string::npos && line.find("Flask") == std::string::npos))
        continue;
      std::smatch m;
      const std::string where = std::string(candidate) + ":" + std::to_string(number);
      if (std::regex_search(line, m, kFastApi)) {
        py.port = 8000;
        py.cmd = {"uvicorn", module + ":" + m[1].str(), "--host", "0.0.0.0", "--port", "8000"};
        py.cmd_source = where;
        evidence.push_back({where, "a FastAPI app, served by uvicorn on port 8000"});
        if (!depends_on(py, "uvicorn"))
          evidence.push_back({where, "warning: uvicorn is not among the dependencies; add it, or "
                                     "the container will not start"});
        return;
      }
      if (std::regex_search(line, m, kFlask)) {
        py.port = 8000;
        if (depends_on(py, "gunicorn")) {
          py.cmd = {"gunicorn", "--bind", "0.0.0.0:8000", module + ":" + m[1].str()};
          evidence.push_back({where, "a Flask app, served by gunicorn on port 8000"});
        } else {
          // Flask's own server listens on 127.0.0.1 unless told otherwise.
          py.cmd = {"flask", "--app", module + ":" + m[1].str(), "run", "--host", "0.0.0.0", "--port", "5000"};
          py.port = 5000;
          evidence.push_back({where, "a Flask app on Flask's development server, port 5000 (add gunicorn to "
                                     "the dependencies to serve it properly)"});
        }
        py.cmd_source = where;
        return;
      }
    }
    py.cmd = {"python", candidate};
    py.cmd_source = candidate;
    evidence.push_back({candidate, "entrypoint: python " + std::string(candidate)});
    return;
  }
}

std::string read_python_version_file(const fs::path& root) {
  const fs::path path = root / ".python-version";
  if (!fs::is_regular_file(path)) return "";
  std::string text(trim(read_text(path)));
  const auto newline = text.find('\n');
  if (newline != std::string::npos) text = trim(text.substr(0, newline));
  if (const auto dash = text.rfind('-'); dash != std::string::npos) text = text.substr(dash + 1);
  return major_minor(text);
}

std::optional<PythonProject> detect_python(const fs::path& root, std::vector<Evidence>& evidence) {
  PythonProject py;
  bool recognised = false;
  std::vector<std::pair<std::string, std::string>> scripts;  // name, module:function

  // Which requirements files install the app: requirements.txt if present,
  // else every requirements*.txt that is not for development.
  std::vector<std::string> req_files;
  if (fs::is_regular_file(root / "requirements.txt")) {
    req_files.push_back("requirements.txt");
  } else {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("requirements", 0) != 0 || e.path().extension() != ".txt") continue;
      if (is_dev_requirements(name)) {
        evidence.push_back({name, "skipped: development requirements"});
        continue;
      }
      req_files.push_back(name);
    }
    std::sort(req_files.begin(), req_files.end());
  }

  const bool has_pyproject = fs::is_regular_file(root / "pyproject.toml") &&
                             read_pyproject(root, py, evidence, scripts, req_files.empty());
  for (const char* lock : {"uv.lock", "poetry.lock"})
    if (has_pyproject && fs::is_regular_file(root / lock)) {
      py.lock = lock;
      break;
    }
  if (has_pyproject) {
    recognised = true;
    evidence.push_back({"pyproject.toml", py.installable ? "a Python package (installed into the venv)"
                                                         : "Python project metadata"});
  }
  if (!py.lock.empty()) {
    read_lock(root, py.lock, py);
    evidence.push_back({py.lock, "installs exactly what the lock pins (" +
                                     std::to_string(py.requirements.size()) + " packages)"});
  } else if (!req_files.empty()) {
    recognised = true;
    RequirementsReader reader(root, py, evidence);
    for (const auto& f : req_files) reader.read(f, 0);
    py.install_files = req_files;
    evidence.push_back({req_files.front(), std::to_string(py.requirements.size()) +
                                               " requirements from " +
                                               std::to_string(py.requirement_files.size()) + " file(s)"});
  } else if (fs::is_regular_file(root / "setup.py")) {
    recognised = true;
    py.installable = true;
    py.requirements_need_source = true;
    evidence.push_back({"setup.py", "a setuptools project: pip installs it from the source tree"});
  }

  if (const std::string v = read_python_version_file(root); !v.empty()) {
    py.python_constraint = "==" + v + ".*";
    py.python_constraint_source = ".python-version";
  }
  if (!py.python_constraint.empty())
    evidence.push_back({py.python_constraint_source, "Python " + py.python_constraint});

  detect_entrypoint(root, py, scripts, evidence);
  if (!py.cmd.empty()) recognised = true;
  if (!recognised) return std::nullopt;
  return py;
}

// ----- CUDA C/C++ -------------------------------------------------------

std::string strip_cmake_comments(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '"') quoted = !quoted;
      if (line[i] == '#' && !quoted) {
        line.resize(i);
        break;
      }
    }
    out += line + "\n";
  }
  return out;
}

const std::map<std::string, std::string>& header_libraries() {
  static const std::map<std::string, std::string> kHeaders = {
      {"cublas_v2.h", "cublas"}, {"cublas.h", "cublas"},       {"cublasLt.h", "cublasLt"},
      {"cufft.h", "cufft"},      {"curand.h", "curand"},       {"cusparse.h", "cusparse"},
      {"cusolverDn.h", "cusolver"}, {"nvrtc.h", "nvrtc"},      {"npp.h", "nppc"},
      {"nvjpeg.h", "nvjpeg"},    {"cudnn.h", "cudnn"},         {"nccl.h", "nccl"}};
  return kHeaders;
}

// One CMake command invocation: its lower-cased name and its arguments,
// split on whitespace ("quoted strings" kept whole, quotes removed).
struct CMakeCommand {
  std::string name;
  std::vector<std::string> args;
};

// Reads the commands of a CMakeLists.txt by hand: a regular expression over
// a whole file recurses once per character in libstdc++ and overflows the
// stack on long argument lists.
std::vector<CMakeCommand> cmake_commands(const std::string& text) {
  std::vector<CMakeCommand> out;
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    if (!(std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < n && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    std::size_t k = j;
    while (k < n && (text[k] == ' ' || text[k] == '\t')) ++k;
    if (k >= n || text[k] != '(') {
      i = j;
      continue;
    }
    CMakeCommand c;
    for (std::size_t x = i; x < j; ++x) c.name += static_cast<char>(std::tolower(static_cast<unsigned char>(text[x])));
    int depth = 1;
    std::string word;
    bool quoted = false;
    for (k = k + 1; k < n && depth > 0; ++k) {
      const char ch = text[k];
      if (quoted) {
        if (ch == '"') quoted = false;
        else word += ch;
        continue;
      }
      if (ch == '"') {
        quoted = true;
      } else if (ch == '(') {
        ++depth;
        word += ch;
      } else if (ch == ')') {
        if (--depth > 0) word += ch;
      } else if (std::isspace(static_cast<unsigned char>(ch))) {
        if (!word.empty()) c.args.push_back(word);
        word.clear();
        continue;
      } else {
        word += ch;
      }
      if (depth == 0 && !word.empty()) c.args.push_back(word);
    }
    if (!word.empty() && depth > 0) c.args.push_back(word);
    out.push_back(std::move(c));
    i = k;
  }
  return out;
}

// Directories of other people's code that a project vendors: their targets
// are not the project's programs.
bool is_vendored(const std::string& rel) {
  for (const auto& part : split(rel, "/"))
    if (part == "third_party" || part == "thirdparty" || part == "3rdparty" || part == "external" ||
        part == "extern" || part == "vendor" || part == "deps" || part == "_deps")
      return true;
  return false;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::optional<CudaCppProject> detect_cuda_cpp(const fs::path& root, const Walk& walk,
                                              std::vector<Evidence>& evidence) {
  CudaCppProject cpp;
  bool cmake_cuda = false;
  std::set<std::string> libs;
  std::string project_name;
  const bool cmake_project = fs::is_regular_file(root / "CMakeLists.txt");
  for (const auto& file : cmake_project ? walk.cmake_lists : std::vector<fs::path>{}) {
    const std::string rel = relative_to_root(file, root);
    if (is_vendored(rel)) continue;
    const std::string text = strip_cmake_comments(read_text(file));
    const std::string dir = relative_to_root(file.parent_path(), root);
    for (const auto& c : cmake_commands(text)) {
      if (c.name == "project" && !c.args.empty()) {
        if (project_name.empty()) project_name = c.args.front();
        for (const auto& a : c.args)
          if (a == "CUDA") {
            cmake_cuda = true;
            evidence.push_back({rel, "CMake project with CUDA as a language"});
          }
      } else if (c.name == "enable_language" && !c.args.empty() && upper(c.args.front()) == "CUDA") {
        cmake_cuda = true;
        evidence.push_back({rel, "enable_language(CUDA)"});
      } else if (c.name == "find_package" && !c.args.empty() && c.args.front() == "CUDAToolkit") {
        cmake_cuda = true;
        const bool versioned = c.args.size() > 1 && std::isdigit(static_cast<unsigned char>(c.args[1][0]));
        if (versioned) cpp.min_cuda = c.args[1];
        evidence.push_back({rel, "find_package(CUDAToolkit" + (versioned ? " " + c.args[1] : std::string()) + ")"});
      } else if (c.name == "install") {
        cpp.cmake_install = true;
      } else if (c.name == "add_executable" && !c.args.empty()) {
        if (std::find(c.args.begin(), c.args.end(), "IMPORTED") != c.args.end() ||
            std::find(c.args.begin(), c.args.end(), "ALIAS") != c.args.end())
          continue;
        std::string name = c.args.front();
        if (name == "${PROJECT_NAME}" || name == "${CMAKE_PROJECT_NAME}") name = project_name;
        if (name.empty() || name.find("${") != std::string::npos) {
          evidence.push_back({rel, "skipped an executable named by a variable (" + c.args.front() + "); --cmd names the program"});
          continue;
        }
        const std::string path = (dir == "." || dir.empty()) ? name : dir + "/" + name;
        if (is_test_path(path) || name.find("test") != std::string::npos) {
          evidence.push_back({rel, "skipped the executable " + name + ": a test"});
          continue;
        }
        cpp.targets.push_back(name);
      }
      for (const auto& a : c.args) {
        if (a.find("CUDA_ARCHITECTURES") != std::string::npos) cpp.sets_architectures = true;
        if (a.rfind("CUDA::", 0) == 0) libs.insert(a.substr(6));
      }
    }
  }
  if (cmake_cuda) {
    cpp.cmake = true;
    if (cpp.targets.empty())
      throw InputError((root / "CMakeLists.txt").string() +
                       ": a CUDA CMake project with no add_executable() gen can name; gen builds programs, "
                       "so add one with a literal name");
    cpp.cuda_libs.assign(libs.begin(), libs.end());
    std::vector<std::string> targets_of_libs;
    for (const auto& l : cpp.cuda_libs) targets_of_libs.push_back("CUDA::" + l);
    evidence.push_back({"CMakeLists.txt", "executables: " + join(cpp.targets, ", ") +
                                              (targets_of_libs.empty()
                                                   ? "; links no CUDA library targets"
                                                   : "; links " + join(targets_of_libs, ", "))});
    if (cpp.sets_architectures)
      evidence.push_back({"CMakeLists.txt", "chooses its own CUDA architectures"});
    return cpp;
  }
  if (walk.cuda_sources.empty()) return std::nullopt;
  if (cmake_project) return std::nullopt;  // a CMake project that does not build CUDA

  // Plain *.cu sources: one nvcc command builds them, and their #includes
  // tell which CUDA libraries to link.
  static const std::regex kInclude(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  for (const auto* list : {&walk.cuda_sources, &walk.cpp_sources})
    for (const auto& f : *list) {
      const std::string rel = relative_to_root(f, root);
      if (is_test_path(rel)) continue;
      if (f.extension() != ".cuh") cpp.sources.push_back(rel);
      std::istringstream lines(read_text(f));
      std::string line;
      while (std::getline(lines, line)) {
        std::smatch m;
        if (line.size() > 1000 || line.find("include") == std::string::npos || !std::regex_search(line, m, kInclude))
          continue;
        const auto hit = header_libraries().find(m[1].str());
        if (hit != header_libraries().end() && libs.insert(hit->second).second)
          evidence.push_back({rel, "includes " + m[1].str() + ": links -l" + hit->second});
      }
    }
  cpp.cuda_libs.assign(libs.begin(), libs.end());
  evidence.push_back({cpp.sources.empty() ? "." : cpp.sources.front(),
                      std::to_string(cpp.sources.size()) + " CUDA/C++ sources, built with one nvcc command"});
  return cpp;
}

}  // namespace

Project detect_project(const fs::path& dir) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (ec || !fs::exists(status))
    throw InputError(dir.string() + ": no such directory; run gen in your project, or pass its path");
  if (!fs::is_directory(status))
    throw InputError(dir.string() + ": not a directory; pass the project's directory");
  {
    fs::directory_iterator probe(dir, ec);
    if (ec)
      throw InputError(dir.string() + ": cannot read the directory (" + ec.message() +
                       "); check its permissions");
  }
  Project p;
  p.dir = dir;
  p.name = image_name(dir);
  const Walk walk = walk_project(dir);
  if (walk.truncated)
    p.evidence.push_back({".", "stopped looking after " + std::to_string(kMaxEntries) + " entries"});
  p.has_cuda_sources = !walk.cuda_sources.empty();
  p.python = detect_python(dir, p.evidence);
  if (!p.python) p.cuda_cpp = detect_cuda_cpp(dir, walk, p.evidence);
  else if (p.has_cuda_sources)
    p.evidence.push_back({relative_to_root(walk.cuda_sources.front(), dir),
                          "CUDA sources in a Python project (an extension): a GPU image builds them on devel"});
  if (!p.python && !p.cuda_cpp)
    throw InputError(dir.string() +
                     ": found nothing gen knows how to build. It looked for Python "
                     "(requirements*.txt, pyproject.toml, setup.py, main.py, app.py, app/main.py, "
                     "server.py) and CUDA C/C++ (CMakeLists.txt with CUDA, *.cu files)");
  return p;
}

}  // namespace imgsmith::gen
