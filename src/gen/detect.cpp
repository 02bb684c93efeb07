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
#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;
namespace {

// Directories that never hold the project's own sources.
const std::set<std::string> kSkippedDirs = {
    ".git", ".hg",          ".svn",        ".venv",         "venv",
    "env",  "node_modules", "__pycache__", ".imgsmith",     "build",
    "dist", ".tox",         ".mypy_cache", ".pytest_cache", "site-packages"};
constexpr int kMaxDepth = 8;
constexpr std::size_t kMaxEntries = 50000;

// What a path is when it is not a regular file, for messages: "a directory".
std::string kind_of(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::block:
    case fs::file_type::character:
      return "a device";
    case fs::file_type::not_found:
      return "missing";
    default:
      return "of a type gen cannot read";
  }
}

// True for a regular file, false when nothing is there; anything else with
// that name (a directory, a FIFO...) is a mistake worth stopping for, since
// skipping it would silently build the wrong image. stat() never opens the
// path, so a FIFO cannot block gen.
bool regular_or_absent(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return false;
  if (ec)
    throw InputError(path.string() + ": cannot look at it (" + ec.message() +
                     "); check its permissions");
  if (status.type() == fs::file_type::regular) return true;
  throw InputError(path.string() + ": is " + kind_of(status) +
                   ", not a regular file; gen reads it as a project file, so replace it with a "
                   "file or rename it");
}

std::string read_text(const fs::path& path) {
  if (!regular_or_absent(path))
    throw InputError(path.string() + ": missing; create it, or fix what names it");
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
    if (sep && !collapsed.empty() &&
        (collapsed.back() == '.' || collapsed.back() == '_' || collapsed.back() == '-')) {
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
  const std::set<std::string>& dev_words = builtin_tables().dev_requirement_words;
  std::string word;
  for (char c : name + ".") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (dev_words.count(word) != 0) return true;
    word.clear();
  }
  return false;
}

class RequirementsReader {
 public:
  RequirementsReader(const fs::path& root, PythonProject& py, std::vector<Evidence>& evidence,
                     BuildContext& build_context)
      : root_(root), py_(py), evidence_(evidence), build_context_(build_context) {}

  void read(const std::string& rel, int depth, const std::string& named_at = "") {
    if (depth > 10 || !visited_.insert(rel).second) return;
    const fs::path path = root_ / rel;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found)
      throw InputError(path.string() + ": " +
                       (named_at.empty() ? "" : "named by -r at " + named_at + " but ") +
                       "missing; fix the include or create it");
    if (status.type() != fs::file_type::regular)
      throw InputError(
          path.string() + ": is " + kind_of(status) +
          ", not a regular file; pip cannot read requirements from it. Replace it with a file");
    py_.requirement_files.push_back(rel);
    const std::string text = read_text(path);
    if (const auto nul = text.find('\0'); nul != std::string::npos)
      throw InputError(
          path.string() + ":" +
          std::to_string(1 +
                         std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n')) +
          ": holds a NUL byte, so it is binary or not UTF-8 (UTF-16?), not a requirements file; "
          "save it as UTF-8 text");
    std::istringstream lines(text);
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
  // One line pip would read. Anything that is neither a requirement, an
  // option, a path nor a URL makes pip fail in the build, or worse, is a
  // half-resolved merge: stop here, naming the line.
  void handle(const std::string& line, const std::string& rel, int number, int depth) {
    const std::string where = rel + ":" + std::to_string(number);
    const std::string at = (root_ / rel).string() + ":" + std::to_string(number);
    for (const char* marker : {"<<<<<<<", "=======", ">>>>>>>", "|||||||"})
      if (line.rfind(marker, 0) == 0)
        throw InputError(at + ": a merge-conflict marker (" + marker +
                         "); resolve the conflict in this file, then run gen again");
    if (line.empty() || line[0] == '#') return;
    if (line[0] == '-') {
      const auto space = line.find_first_of(" =");
      const std::string flag = line.substr(0, space);
      const std::string value =
          space == std::string::npos ? "" : std::string(trim(line.substr(space + 1)));
      if (flag == "-r" || flag == "--requirement" || flag == "-c" || flag == "--constraint") {
        // docker build sees only the build context: COPY ../shared.txt fails
        // there, so a file outside it is refused now. An absolute path is
        // the host's, which no context holds, whatever --context says.
        if (fs::path(value).is_absolute())
          throw InputError(
              at + ": " + flag + " " + value +
              " is an absolute path on this host, which no docker "
              "build context holds; COPY cannot reach it. Copy the file into the build context " +
              build_context_.shown().string() + " and name it by a relative path");
        // pip reads an include relative to the file that names it.
        const std::string inc = build_context_
                                    .reach(fs::path(rel).parent_path().generic_string(), value,
                                           where, at, flag + " " + value)
                                    .path;
        evidence_.push_back({where, "includes " + inc});
        read(inc, depth + 1, at);
      } else if (flag == "-e" || flag == "--editable") {
        // pip reads a local path relative to its working directory, the
        // project's: one outside the project is copied beside it, and the
        // project's own code need not come first for it.
        const std::string local = local_path(value);
        if (!local.empty() && !reaches_in_project(local, where, at, flag + " " + value)) return;
        py_.requirements_need_source = true;
        evidence_.push_back({where, "installs " + value +
                                        " from the source tree, so the code is "
                                        "copied before the dependencies are installed"});
      } else if (flag == "-i" || flag == "--index-url" || flag == "--extra-index-url" ||
                 flag == "-f" || flag == "--find-links") {
        py_.index_options.push_back(flag + " " + value);
        evidence_.push_back({where, "package index option " + flag + " " + value});
      }
      return;
    }
    if (line[0] == '.' || line[0] == '/' || looks_like_path(line)) {
      const std::string local = local_path(line);
      if (!local.empty() && !reaches_in_project(local, where, at, "the local path " + local))
        return;
      py_.requirements_need_source = true;
      evidence_.push_back({where, "installs the local path " + line +
                                      ", so the code is copied "
                                      "before the dependencies are installed"});
      return;
    }
    if (looks_like_url(line)) {
      evidence_.push_back({where, "installs " + line + " by URL"});
      return;
    }
    // Per-requirement options ("pkg==1.0 --hash=sha256:...") are pip's, not
    // part of the requirement.
    const std::string requirement(trim(line.substr(0, line.find(" --"))));
    if (auto r = parse_requirement(requirement, where)) {
      // name @ file:../../libs/common: a local path by URL.
      if (const std::string local = file_url_path(requirement); !local.empty())
        reaches_in_project(local, where, at, r->name + " @ file:" + local);
      py_.requirements.push_back(*r);
      return;
    }
    throw InputError(
        at + ": '" + (line.size() > 60 ? line.substr(0, 60) + "..." : line) +
        "' is not a requirement (PEP 508: name[extras] specifier ; marker), a pip option, a path "
        "or a URL; fix or delete the line");
  }

  static bool looks_like_url(const std::string& line) {
    static const std::regex kScheme(R"(^[A-Za-z][A-Za-z0-9+.-]*://)");
    return std::regex_search(line, kScheme);
  }

  // pip takes "wheels/x.whl" or "pkg/" as a path when it holds a '/' before
  // any space, or names an archive.
  static bool looks_like_path(const std::string& line) {
    const std::string first = line.substr(0, line.find_first_of(" \t;"));
    if (looks_like_url(first)) return false;
    for (const char* ext : {".whl", ".tar.gz", ".zip"}) {
      const std::string e = ext;
      if (first.size() > e.size() && first.compare(first.size() - e.size(), e.size(), e) == 0)
        return true;
    }
    return first.find('/') != std::string::npos && first.find('@') == std::string::npos;
  }

  // The relative path a local install names ("../../libs/common" of
  // "-e ../../libs/common[dev]" or "file:../../libs/common"), or "" for a URL,
  // an absolute path (the image's own) or anything else.
  static std::string local_path(const std::string& text) {
    std::string path = text.substr(0, text.find_first_of(" \t;#"));
    if (path.rfind("file:", 0) == 0) {
      path = path.substr(5);
      if (path.rfind("//", 0) == 0) return "";  // file:///abs or file://host/...
    } else if (looks_like_url(path) || path.find('@') != std::string::npos) {
      return "";
    }
    if (const auto bracket = path.find('['); bracket != std::string::npos)
      path.resize(bracket);  // [extras]
    if (path.empty() || path[0] == '/') return "";
    return path;
  }

  // "name @ file:PATH" with a relative PATH; "" otherwise.
  static std::string file_url_path(const std::string& requirement) {
    const auto at = requirement.find('@');
    if (at == std::string::npos) return "";
    const std::string url(trim(requirement.substr(at + 1)));
    return url.rfind("file:", 0) == 0 ? local_path(url) : "";
  }

  // True when the local path is inside the project; one in the build
  // context above it is recorded for copying, one beyond it refused.
  bool reaches_in_project(const std::string& local, const std::string& where, const std::string& at,
                          const std::string& what) {
    return build_context_.reach(".", local, where, at, what).in_project;
  }

  fs::path root_;
  PythonProject& py_;
  std::vector<Evidence>& evidence_;
  BuildContext& build_context_;
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

// A dependency that pyproject.toml installs from a local directory:
// [tool.uv.sources] name = { path = "../../libs/common" }, or Poetry's
// name = { path = "../../libs/common", develop = true }.
struct PathSource {
  std::string name;   // PEP 503
  std::string path;   // as written, relative to the project
  int line = 0;       // in pyproject.toml
  std::string table;  // "[tool.uv.sources]"
};

void read_path_source(const std::string& name, const toml::node& value, const std::string& table,
                      std::vector<PathSource>& out) {
  if (const auto* t = value.as_table())
    if (const auto* path = (*t)["path"].as_string())
      out.push_back(
          {normalise_name(name), path->get(), static_cast<int>(value.source().begin.line), table});
}

// Returns false when the file only configures tools ([tool.black]...), as
// C++ projects' pyproject.toml files often do: that is no Python project.
bool read_pyproject(const fs::path& root, PythonProject& py, std::vector<Evidence>& evidence,
                    std::vector<std::pair<std::string, std::string>>& scripts, bool use_deps,
                    std::vector<PathSource>& path_sources) {
  const fs::path path = root / "pyproject.toml";
  const toml::table doc = parse_toml(path);
  if (!doc.contains("project") && !doc.contains("build-system") && !doc["tool"]["poetry"])
    return false;
  if (doc.contains("build-system")) py.installable = true;
  if (const auto* project = doc["project"].as_table()) {
    if (const auto* deps = (*project)["dependencies"].as_array()) {
      for (std::size_t i = 0; i < deps->size(); ++i)
        if (const auto* s = deps->get(i)->as_string())
          if (auto r = parse_requirement(s->get(), "pyproject.toml [project] dependencies"))
            if (use_deps) py.requirements.push_back(*r);
    }
    if (const auto* optional = (*project)["optional-dependencies"].as_table())
      for (const auto& [extra, list] : *optional) {
        auto& group = py.optional_dependencies[normalise_name(std::string(extra.str()))];
        if (const auto* deps = list.as_array())
          for (std::size_t i = 0; i < deps->size(); ++i)
            if (const auto* s = deps->get(i)->as_string())
              if (auto r = parse_requirement(
                      s->get(),
                      "pyproject.toml [project.optional-dependencies] " + std::string(extra.str())))
                group.push_back(*r);
      }
    if (const auto* rp = (*project)["requires-python"].as_string()) {
      py.python_constraint = rp->get();
      py.python_constraint_source = "pyproject.toml requires-python";
    }
    if (const auto* s = (*project)["scripts"].as_table())
      for (const auto& [name, target] : *s)
        scripts.emplace_back(std::string(name.str()),
                             target.is_string() ? target.as_string()->get() : std::string());
  }
  // Where uv and Poetry fetch packages (PyTorch's CUDA indexes, mostly):
  // ignored, pip would install PyPI's build, another CUDA than asked for.
  auto read_indexes = [&](const toml::array* indexes, const std::string& label) {
    if (indexes == nullptr || !use_deps) return;
    for (std::size_t i = 0; i < indexes->size(); ++i)
      if (const auto* index = indexes->get(i)->as_table())
        if (const auto* url = (*index)["url"].as_string()) {
          const std::string option = "--extra-index-url " + url->get();
          py.index_options.push_back(option);
          py.pyproject_indexes.push_back(option);
          evidence.push_back({"pyproject.toml " + label, "package index " + url->get()});
        }
  };
  read_indexes(doc["tool"]["uv"]["index"].as_array(), "[[tool.uv.index]]");
  if (const auto* sources = doc["tool"]["uv"]["sources"].as_table())
    for (const auto& [name, value] : *sources)
      read_path_source(std::string(name.str()), value, "[tool.uv.sources]", path_sources);
  read_indexes(doc["tool"]["poetry"]["source"].as_array(), "[[tool.poetry.source]]");
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
        read_path_source(std::string(name.str()), value, "[tool.poetry.dependencies]",
                         path_sources);
        Requirement r;
        r.name = normalise_name(std::string(name.str()));
        r.specifier = spec;
        r.source = "pyproject.toml [tool.poetry.dependencies]";
        if (const auto* t = value.as_table())
          if (const auto* extras = (*t)["extras"].as_array())
            for (std::size_t i = 0; i < extras->size(); ++i)
              if (const auto* e = extras->get(i)->as_string())
                r.extras.push_back(normalise_name(e->get()));
        r.text = r.name + (r.extras.empty() ? "" : "[" + join(r.extras, ",") + "]") + r.specifier;
        if (use_deps) py.requirements.push_back(r);
      }
    if (const auto* s = (*poetry)["scripts"].as_table())
      for (const auto& [name, target] : *s)
        scripts.emplace_back(std::string(name.str()),
                             target.is_string() ? target.as_string()->get() : std::string());
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
void detect_entrypoint(const fs::path& root, PythonProject& py,
                       const std::vector<std::pair<std::string, std::string>>& scripts,
                       std::vector<Evidence>& evidence) {
  if (!scripts.empty() && !py.installable) {
    // Without a [build-system] nothing installs the script; call its target.
    const std::string& target = scripts.front().second;
    const auto colon = target.find(':');
    const std::string module = target.substr(0, colon);
    const std::string call = colon == std::string::npos ? "" : target.substr(colon + 1);
    py.cmd = {"python", "-c",
              "import " + module + (call.empty() ? "" : "; " + module + "." + call + "()")};
    py.cmd_source = "pyproject.toml scripts";
    evidence.push_back(
        {"pyproject.toml", "entrypoint: the script '" + scripts.front().first + "' (" + target +
                               "), called directly: without a [build-system] it is not installed"});
    return;
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
    return;
  }
  static const std::regex kFastApi(R"(^\s*([A-Za-z_]\w*)\s*(:[^=]*)?=\s*(fastapi\.)?FastAPI\s*\()");
  static const std::regex kFlask(R"(^\s*([A-Za-z_]\w*)\s*(:[^=]*)?=\s*(flask\.)?Flask\s*\()");
  static const std::regex kStreamlit(R"(^\s*(import|from)\s+streamlit\b)");
  static const std::regex kGradio(R"(^\s*(import|from)\s+gradio\b)");
  // Every candidate is read for an app a server runs before any is run as a
  // plain script: main.py may be a CLI beside the real server in app.py.
  static const char* const kCandidates[] = {"app/main.py", "main.py",  "app.py",
                                            "server.py",   "serve.py", "streamlit_app.py",
                                            "demo.py",     "train.py"};
  for (const char* candidate : kCandidates) {
    const fs::path path = root / candidate;
    if (!regular_or_absent(path)) continue;
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
      if (line.size() > 1000 ||
          (line.find("FastAPI") == std::string::npos && line.find("Flask") == std::string::npos &&
           line.find("streamlit") == std::string::npos && line.find("gradio") == std::string::npos))
        continue;
      std::smatch m;
      const std::string where = std::string(candidate) + ":" + std::to_string(number);
      if (std::regex_search(line, m, kFastApi)) {
        py.port = 8000;
        py.cmd = {"uvicorn", module + ":" + m[1].str(), "--host", "0.0.0.0", "--port", "8000"};
        py.cmd_source = where;
        evidence.push_back({where, "a FastAPI app, served by uvicorn on port 8000"});
        if (!depends_on(py, "uvicorn"))
          evidence.push_back({where,
                              "warning: uvicorn is not among the dependencies; add it, or "
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
          py.cmd = {"flask",  "--app", module + ":" + m[1].str(), "run", "--host", "0.0.0.0",
                    "--port", "5000"};
          py.port = 5000;
          evidence.push_back(
              {where,
               "a Flask app on Flask's development server, port 5000 (add gunicorn to "
               "the dependencies to serve it properly)"});
        }
        py.cmd_source = where;
        return;
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
        return;
      }
      if (std::regex_search(line, kGradio)) {
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
        return;
      }
    }
  }
  for (const char* candidate : kCandidates) {
    if (!regular_or_absent(root / candidate)) continue;
    py.cmd = {"python", candidate};
    py.cmd_source = candidate;
    evidence.push_back({candidate, "entrypoint: python " + std::string(candidate)});
    return;
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
    return;
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

// The accelerator a requirements file is written for, from the words of its
// name: "cpu", "gpu" (gpu, cuda, cuda12, cu121...) or "" for neither.
std::string requirements_variant(const std::string& name) {
  static const std::regex kCudaWord(R"((gpu|cuda\d*|cu\d{2,3}))");
  std::string word;
  std::string variant;
  for (char c : name + ".") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (word == "cpu")
      variant = "cpu";
    else if (std::regex_match(word, kCudaWord))
      variant = "gpu";
    word.clear();
  }
  return variant;
}

// Which requirements files install the app: --requirements when given, else
// requirements.txt, else every requirements*.txt that is not for development.
// Files for the CPU and for the GPU are alternatives, never merged: merged,
// the CPU index wins and a GPU project gets a CPU image.
std::vector<std::string> choose_requirements(const fs::path& root, const std::string& chosen,
                                             std::vector<Evidence>& evidence) {
  if (!chosen.empty()) {
    const fs::path rel = fs::path(chosen).lexically_normal();
    const std::string text = rel.generic_string();
    if (rel.is_absolute() || text == ".." || text.rfind("../", 0) == 0)
      throw InputError("--requirements " + chosen + ": give a file inside the project " +
                       root.string() + " (the docker build context)");
    evidence.push_back({"--requirements", "installs " + text + ", as asked"});
    return {text};
  }
  if (regular_or_absent(root / "requirements.txt")) return {"requirements.txt"};
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("requirements", 0) != 0 || e.path().extension() != ".txt") continue;
    if (is_dev_requirements(name)) {
      evidence.push_back({name, "skipped: development requirements"});
      continue;
    }
    regular_or_absent(e.path());  // a directory or FIFO by that name stops here
    files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> gpu;
  std::vector<std::string> cpu;
  for (const auto& f : files) {
    const std::string v = requirements_variant(f);
    if (v == "gpu") gpu.push_back(f);
    if (v == "cpu") cpu.push_back(f);
  }
  if (gpu.size() > 1)
    throw InputError(
        root.string() + ": " + join(gpu, " and ") +
        " are alternatives for different GPU builds; choose one with --requirements FILE");
  if (!gpu.empty() && !cpu.empty()) {
    for (const auto& c : cpu) {
      files.erase(std::find(files.begin(), files.end(), c));
      evidence.push_back({c, "skipped: the CPU alternative to " + gpu.front() +
                                 "; gen installs the GPU one (--requirements " + c +
                                 " picks this instead)"});
    }
  }
  return files;
}

// A conda environment file, read as far as gen needs: its conda packages,
// its Python, and whether it has a pip: section. YAML in the shape conda
// writes (`dependencies:` then `- name=version` items).
struct CondaEnvironment {
  std::string file;
  int dependencies_line = 0;
  std::vector<std::pair<std::string, int>> conda_packages;  // name, line (python and pip left out)
  std::string python;                                       // "3.10"
  int pip_packages = 0;
};

std::optional<CondaEnvironment> read_conda_environment(const fs::path& root) {
  for (const char* name : {"environment.yml", "environment.yaml"}) {
    if (!regular_or_absent(root / name)) continue;
    CondaEnvironment env;
    env.file = name;
    std::istringstream lines(read_text(root / name));
    std::string line;
    int number = 0;
    bool in_dependencies = false;
    std::size_t pip_indent = std::string::npos;  // indent of the pip: list items
    while (std::getline(lines, line)) {
      ++number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const std::string text(trim(line));
      if (text.empty() || text[0] == '#') continue;
      const std::size_t indent = line.find_first_not_of(" \t");
      if (indent == 0) {
        in_dependencies = text.rfind("dependencies:", 0) == 0;
        if (in_dependencies) env.dependencies_line = number;
        pip_indent = std::string::npos;
        continue;
      }
      if (!in_dependencies || text.rfind("- ", 0) != 0) continue;
      std::string item(trim(text.substr(2)));
      if (pip_indent != std::string::npos && indent > pip_indent) {
        ++env.pip_packages;
        continue;
      }
      pip_indent = std::string::npos;
      if (item == "pip:") {
        pip_indent = indent;
        continue;
      }
      if (const auto colons = item.find("::"); colons != std::string::npos)
        item = item.substr(colons + 2);
      const auto end = item.find_first_of("=<>! ");
      const std::string pkg = normalise_name(item.substr(0, end));
      if (pkg == "python") {
        // conda's "python=3.10" means 3.10.*; ">=3.9" gives its lower bound.
        const auto version =
            end == std::string::npos ? std::string::npos : item.find_first_not_of("=<>! ", end);
        if (version != std::string::npos) env.python = major_minor(item.substr(version));
        continue;
      }
      if (pkg != "pip" && !pkg.empty()) env.conda_packages.emplace_back(pkg, number);
    }
    return env;
  }
  return std::nullopt;
}

std::optional<PythonProject> detect_python(const fs::path& root,
                                           const std::string& chosen_requirements,
                                           std::vector<Evidence>& evidence,
                                           BuildContext& build_context) {
  PythonProject py;
  bool recognised = false;
  std::vector<std::pair<std::string, std::string>> scripts;  // name, module:function
  std::vector<PathSource> path_sources;

  const std::vector<std::string> req_files =
      choose_requirements(root, chosen_requirements, evidence);
  const std::optional<CondaEnvironment> conda = read_conda_environment(root);

  const bool has_pyproject =
      regular_or_absent(root / "pyproject.toml") &&
      read_pyproject(root, py, evidence, scripts, req_files.empty(), path_sources);
  for (const char* lock : {"uv.lock", "poetry.lock"})
    if (has_pyproject && regular_or_absent(root / lock)) {
      py.lock = lock;
      break;
    }
  if (has_pyproject) {
    recognised = true;
    evidence.push_back({"pyproject.toml", py.installable
                                              ? "a Python package (installed into the venv)"
                                              : "Python project metadata"});
  }
  // pyproject.toml installs the dependencies (itself or through its lock):
  // a directory it installs from outside the project is copied beside it,
  // or refused beyond the build context.
  if (!py.lock.empty() || req_files.empty())
    for (const auto& source : path_sources) {
      if (fs::path(source.path).is_absolute()) continue;  // the image's own path
      const std::string where = "pyproject.toml:" + std::to_string(source.line);
      const auto reached =
          build_context.reach(".", source.path, where, (root / where).string(),
                              source.table + " " + source.name + " path " + source.path);
      if (!reached.in_project) py.outside_path_sources[source.name] = reached.path;
    }
  if (!py.lock.empty()) {
    read_lock(root, py.lock, py);
    evidence.push_back({py.lock, "installs exactly what the lock pins (" +
                                     std::to_string(py.requirements.size()) + " packages)"});
  } else if (!req_files.empty()) {
    recognised = true;
    RequirementsReader reader(root, py, evidence, build_context);
    for (const auto& f : req_files) reader.read(f, 0);
    py.install_files = req_files;
    // setup.py beside the requirements builds the project's own package (a
    // CUDA extension, most often): pip installs it after them.
    if (regular_or_absent(root / "setup.py")) {
      py.installable = true;
      evidence.push_back(
          {"setup.py", "a setuptools project: pip installs it after the requirements"});
    }
    evidence.push_back(
        {req_files.front(), std::to_string(py.requirements.size()) + " requirements from " +
                                std::to_string(py.requirement_files.size()) + " file(s)"});
  } else if (regular_or_absent(root / "setup.py")) {
    recognised = true;
    py.installable = true;
    py.requirements_need_source = true;
    evidence.push_back({"setup.py", "a setuptools project: pip installs it from the source tree"});
  }

  if (conda) {
    const std::string at = conda->file + ":" + std::to_string(conda->dependencies_line);
    const bool pip_sources =
        !req_files.empty() || !py.lock.empty() || !py.requirements.empty() || py.installable;
    if (!pip_sources) {
      // An image without the environment's packages cannot run the app, so
      // refuse rather than write one.
      std::vector<std::string> names;
      for (const auto& [name, line] : conda->conda_packages) names.push_back(name);
      if (names.size() > 5) {
        names.resize(5);
        names.push_back("...");
      }
      throw InputError(
          (root / conda->file).string() + ":" + std::to_string(conda->dependencies_line) +
          ": a conda environment" + (names.empty() ? "" : " (" + join(names, ", ") + ")") +
          ", which gen does not install (it has no micromamba step), and an image without it would "
          "not run. List the packages in requirements.txt under their pip names, then run gen "
          "again");
    }
    // Both: pip's files are what the project installs with pip; conda
    // packages pip does not get are named, never dropped silently.
    const std::string pip_file =
        !req_files.empty() ? req_files.front() : (py.lock.empty() ? "pyproject.toml" : py.lock);
    evidence.push_back({at, "not installed: " + pip_file +
                                " lists the Python dependencies and pip installs them; "
                                "gen does not install conda environments"});
    const std::set<std::string>& from_the_image = builtin_tables().conda_from_image;
    std::vector<std::string> missing;
    for (const auto& [name, line] : conda->conda_packages) {
      const std::string pip_name = name == "pytorch" ? "torch" : name;
      if (from_the_image.count(name) != 0 || name.rfind("cuda-", 0) == 0 ||
          depends_on(py, pip_name))
        continue;
      missing.push_back(name + " (line " + std::to_string(line) + ")");
    }
    if (!missing.empty())
      evidence.push_back(
          {conda->file,
           "warning: conda packages not in " + pip_file +
               " will be missing from the "
               "image: " +
               join(missing, ", ") + "; add those pip has to " + pip_file +
               ", and install the others another way (--base, or your own RUN apt-get)"});
    if (py.python_constraint.empty() && !conda->python.empty()) {
      py.python_constraint = "==" + conda->python + ".*";
      py.python_constraint_source = conda->file + " python";
    }
  }

  // A torch CUDA extension: setup.py (or a pyproject build hook) building
  // with torch.utils.cpp_extension's CUDAExtension.
  for (const char* file : {"setup.py", "pyproject.toml"}) {
    if (py.cuda_extension || !regular_or_absent(root / file)) continue;
    std::istringstream lines(read_text(root / file));
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (line.find("torch.utils.cpp_extension") == std::string::npos &&
          line.find("CUDAExtension") == std::string::npos)
        continue;
      py.cuda_extension = true;
      py.cuda_extension_source = std::string(file) + ":" + std::to_string(number);
      evidence.push_back({py.cuda_extension_source,
                          "a torch CUDA extension (torch.utils.cpp_extension): compiled in "
                          "the builder, on devel"});
      break;
    }
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
  return builtin_tables().header_libraries;
}

// One CMake command invocation: its lower-cased name and its arguments,
// split on whitespace ("quoted strings" kept whole, quotes removed).
struct CMakeCommand {
  std::string name;
  std::vector<std::string> args;
  int line = 0;  // where the command starts, for messages
};

// Reads the commands of a CMakeLists.txt by hand: a regular expression over
// a whole file recurses once per character in libstdc++ and overflows the
// stack on long argument lists.
std::vector<CMakeCommand> cmake_commands(const std::string& text) {
  std::vector<CMakeCommand> out;
  std::size_t i = 0;
  const std::size_t n = text.size();
  int line = 1;
  std::size_t counted = 0;  // text[0, counted) has been counted into line
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
    line += static_cast<int>(std::count(text.begin() + static_cast<long>(counted),
                                        text.begin() + static_cast<long>(i), '\n'));
    counted = i;
    c.line = line;
    for (std::size_t x = i; x < j; ++x)
      c.name += static_cast<char>(std::tolower(static_cast<unsigned char>(text[x])));
    int depth = 1;
    std::string word;
    bool quoted = false;
    for (k = k + 1; k < n && depth > 0; ++k) {
      const char ch = text[k];
      if (quoted) {
        if (ch == '"')
          quoted = false;
        else
          word += ch;
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

// The directory add_subdirectory() names, relative to the project, or ""
// when a variable gen cannot resolve or an absolute path names it.
std::string subdirectory_of(const CMakeCommand& c, const std::string& list_dir) {
  std::string source = c.args.front();
  std::string base = list_dir;
  for (const char* var : {"${CMAKE_CURRENT_SOURCE_DIR}", "${CMAKE_CURRENT_LIST_DIR}",
                          "${PROJECT_SOURCE_DIR}", "${CMAKE_SOURCE_DIR}"})
    if (source.rfind(var, 0) == 0) {
      if (std::string(var).find("CURRENT") == std::string::npos) base = ".";
      source = source.substr(std::string(var).size());
      while (!source.empty() && source.front() == '/') source.erase(0, 1);
      if (source.empty()) source = ".";
      break;
    }
  if (source.find("${") != std::string::npos || fs::path(source).is_absolute()) return "";
  return (fs::path(base) / source).generic_string();
}

std::optional<CudaCppProject> detect_cuda_cpp(const fs::path& root, const Walk& walk,
                                              std::vector<Evidence>& evidence,
                                              BuildContext& build_context) {
  CudaCppProject cpp;
  bool cmake_cuda = false;
  std::set<std::string> libs;
  std::string project_name;
  const bool cmake_project = regular_or_absent(root / "CMakeLists.txt");
  // The project's CMakeLists.txt files, then those of directories it adds
  // from outside itself (add_subdirectory(../../libs/kernels kernels)): those
  // tell which CUDA, CMake and libraries the build needs, never which
  // programs the project is or how it installs them.
  std::vector<std::pair<fs::path, bool>> lists;  // file, outside the project
  if (cmake_project)
    for (const auto& f : walk.cmake_lists) lists.emplace_back(f, false);
  std::set<std::string> followed;
  for (std::size_t n = 0; n < lists.size(); ++n) {
    const fs::path file = lists[n].first;  // a copy: following a subdirectory grows the list
    const bool outside = lists[n].second;
    const std::string rel = relative_to_root(file, root);
    if (is_vendored(rel)) continue;
    const std::string text = strip_cmake_comments(read_text(file));
    const std::string dir = relative_to_root(file.parent_path(), root);
    for (const auto& c : cmake_commands(text)) {
      if (c.name == "add_subdirectory" && !c.args.empty()) {
        const std::string named = subdirectory_of(c, dir);
        if (named.empty()) continue;
        const std::string where = rel + ":" + std::to_string(c.line);
        const auto reached = build_context.reach(".", named, where, (root / where).string(),
                                                 "add_subdirectory(" + c.args.front() + ")");
        if (!reached.in_project && followed.insert(reached.path).second)
          for (const auto& f : walk_project(root / reached.path).cmake_lists)
            lists.emplace_back(f, true);
        continue;
      }
      if (c.name == "project" && !c.args.empty()) {
        if (project_name.empty() && !outside) project_name = c.args.front();
        for (const auto& a : c.args)
          if (a == "CUDA") {
            cmake_cuda = true;
            evidence.push_back({rel, "CMake project with CUDA as a language"});
          }
      } else if (c.name == "enable_language" && !c.args.empty() &&
                 upper(c.args.front()) == "CUDA") {
        cmake_cuda = true;
        evidence.push_back({rel, "enable_language(CUDA)"});
      } else if (c.name == "find_package" && !c.args.empty() && c.args.front() == "CUDAToolkit") {
        cmake_cuda = true;
        const bool versioned =
            c.args.size() > 1 && std::isdigit(static_cast<unsigned char>(c.args[1][0]));
        if (versioned) {
          cpp.min_cuda = c.args[1];
          cpp.min_cuda_source = rel + ":" + std::to_string(c.line);
        }
        evidence.push_back({rel, "find_package(CUDAToolkit" +
                                     (versioned ? " " + c.args[1] : std::string()) + ")"});
      } else if (c.name == "cmake_minimum_required") {
        // VERSION 3.24 or a policy range 3.24...3.28: the first is the minimum.
        for (std::size_t k = 0; k + 1 < c.args.size(); ++k)
          if (c.args[k] == "VERSION") {
            const std::string v = c.args[k + 1].substr(0, c.args[k + 1].find("..."));
            if (!v.empty() && std::isdigit(static_cast<unsigned char>(v[0])) &&
                (cpp.min_cmake.empty() || version_less(cpp.min_cmake, v))) {
              cpp.min_cmake = v;
              cpp.min_cmake_source = rel + ":" + std::to_string(c.line);
            }
          }
      } else if (c.name == "install") {
        if (!outside) cpp.cmake_install = true;
      } else if (c.name == "add_executable" && !c.args.empty() && !outside) {
        if (std::find(c.args.begin(), c.args.end(), "IMPORTED") != c.args.end() ||
            std::find(c.args.begin(), c.args.end(), "ALIAS") != c.args.end())
          continue;
        std::string name = c.args.front();
        if (name == "${PROJECT_NAME}" || name == "${CMAKE_PROJECT_NAME}") name = project_name;
        if (name.empty() || name.find("${") != std::string::npos) {
          evidence.push_back({rel, "skipped an executable named by a variable (" + c.args.front() +
                                       "); --cmd names the program"});
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
        if (a.find("CUDA_ARCHITECTURES") != std::string::npos && !outside)
          cpp.sets_architectures = true;
        if (a.rfind("CUDA::", 0) == 0) libs.insert(a.substr(6));
      }
      // cuDNN and NCCL have no CUDA:: targets: projects find them by hand
      // (find_library(... cudnn), find_path(... cudnn.h), NCCL_* variables,
      // find_package(NCCL)), and fail at configure on an image without them.
      const std::string where = rel + ":" + std::to_string(c.line);
      for (const auto& a : c.args) {
        std::string l;
        for (char ch : a) l += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        const bool finder = c.name == "find_library" || c.name == "find_path" ||
                            c.name == "find_package" || c.name == "find_file";
        for (const char* lib : {"cudnn", "nccl"}) {
          const std::string name = lib;
          const bool named = l == name || l == name + ".h" || l == "lib" + name + ".so" ||
                             l == "lib" + name ||
                             (c.name == "find_package" && l == name && &a == &c.args.front());
          const bool variable =
              a.rfind(upper(name) + "_", 0) == 0 || a.rfind("${" + upper(name) + "_", 0) == 0;
          if (((finder && named) || variable) && libs.insert(name).second)
            evidence.push_back({where, c.name + "(" + join(c.args, " ").substr(0, 80) +
                                           "): the program uses " +
                                           (name == "cudnn" ? "cuDNN" : "NCCL")});
        }
      }
    }
  }
  if (cmake_cuda) {
    cpp.cmake = true;
    if (cpp.targets.empty())
      throw InputError(
          (root / "CMakeLists.txt").string() +
          ": a CUDA CMake project with no add_executable() gen can name; gen builds programs, "
          "so add one with a literal name");
    cpp.cuda_libs.assign(libs.begin(), libs.end());
    std::vector<std::string> targets_of_libs;
    for (const auto& l : cpp.cuda_libs)
      targets_of_libs.push_back(l == "cudnn" || l == "nccl" ? l + " (found by hand)"
                                                            : "CUDA::" + l);
    evidence.push_back({"CMakeLists.txt",
                        "executables: " + join(cpp.targets, ", ") +
                            (targets_of_libs.empty() ? "; links no CUDA library targets"
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
  // A definition of main: "int main(", "auto main (", GNU style's "main ("
  // at the start of a line; not "domain(", not a comment line.
  static const std::regex kMain(R"(^\s*([A-Za-z_][\w:<>\*&\s]*[\s\*&])?main\s*\()");
  std::string main_at;
  for (const auto* list : {&walk.cuda_sources, &walk.cpp_sources})
    for (const auto& f : *list) {
      const std::string rel = relative_to_root(f, root);
      if (is_test_path(rel)) continue;
      if (f.extension() != ".cuh") cpp.sources.push_back(rel);
      std::istringstream lines(read_text(f));
      std::string line;
      int number = 0;
      while (std::getline(lines, line)) {
        ++number;
        if (main_at.empty() && line.size() <= 1000 && line.find("main") != std::string::npos &&
            std::regex_search(line, kMain))
          main_at = rel + ":" + std::to_string(number);
        std::smatch m;
        if (line.size() > 1000 || line.find("include") == std::string::npos ||
            !std::regex_search(line, m, kInclude))
          continue;
        const auto hit = header_libraries().find(m[1].str());
        if (hit != header_libraries().end() && libs.insert(hit->second).second)
          evidence.push_back({rel, "includes " + m[1].str() + ": links -l" + hit->second});
      }
    }
  // nvcc -o links a program; sources without main() are a library, which
  // would fail to link in the build (or, worse, be shipped as a "program").
  if (main_at.empty())
    throw InputError(
        (root / relative_to_root(walk.cuda_sources.front(), root)).string() + ": none of the " +
        std::to_string(cpp.sources.size()) +
        " CUDA/C++ sources defines main(), so they are a library, and gen builds programs. "
        "Run gen on the program that uses it, or build the library with CMake");
  evidence.push_back({main_at, "defines main(): the sources build one program"});
  cpp.cuda_libs.assign(libs.begin(), libs.end());
  evidence.push_back(
      {cpp.sources.empty() ? "." : cpp.sources.front(),
       std::to_string(cpp.sources.size()) + " CUDA/C++ sources, built with one nvcc command"});
  return cpp;
}

// apt.txt, as repo2docker reads it: one Debian package per line, '#'
// comments. A line that is no package name would fail apt in the build, so
// it stops gen here, naming the line.
void read_apt_txt(const fs::path& root, Project& p) {
  const fs::path path = root / "apt.txt";
  if (!regular_or_absent(path)) return;
  static const std::regex kPackage(R"([a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+~:*-]+)?)");
  std::istringstream lines(read_text(path));
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    const std::string text(trim(line.substr(0, line.find('#'))));
    if (text.empty()) continue;
    if (text.size() > 200 || !std::regex_match(text, kPackage))
      throw InputError(
          path.string() + ":" + std::to_string(number) + ": '" + text.substr(0, 60) +
          "' is not a Debian package name; apt.txt lists one package per line (such as ffmpeg or "
          "libgl1, optionally pinned as ffmpeg=7:5.1.*), with # comments. Fix or delete the line");
    p.system_packages.push_back({"apt.txt:" + std::to_string(number), text});
  }
  if (!p.system_packages.empty())
    p.evidence.push_back({"apt.txt", std::to_string(p.system_packages.size()) +
                                         " system package(s) installed with apt"});
}

}  // namespace

Project detect_project(const fs::path& dir, const std::string& requirements,
                       const fs::path& context) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (ec || !fs::exists(status))
    throw InputError(dir.string() +
                     ": no such directory; run gen in your project, or pass its path");
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
  BuildContext build_context(dir, context, p.evidence);
  p.context = build_context.canonical();
  p.context_path = build_context.project_path();
  const Walk walk = walk_project(dir);
  if (walk.truncated)
    p.evidence.push_back(
        {".", "stopped looking after " + std::to_string(kMaxEntries) + " entries"});
  p.has_cuda_sources = !walk.cuda_sources.empty();
  p.python = detect_python(dir, requirements, p.evidence, build_context);
  if (!p.python)
    p.cuda_cpp = detect_cuda_cpp(dir, walk, p.evidence, build_context);
  else if (p.has_cuda_sources)
    p.evidence.push_back(
        {relative_to_root(walk.cuda_sources.front(), dir),
         "CUDA sources in a Python project (an extension): a GPU image builds them on devel"});
  if (p.python || p.cuda_cpp) read_apt_txt(dir, p);
  if (!p.python && !p.cuda_cpp)
    throw InputError(
        dir.string() +
        ": found nothing gen knows how to build. It looked for Python "
        "(requirements*.txt, pyproject.toml, setup.py, main.py, app.py, app/main.py, "
        "server.py, train.py, a package with __main__.py, *.ipynb) and CUDA C/C++ (CMakeLists.txt "
        "with CUDA, *.cu files)");
  p.outside_paths = build_context.outside_paths();
  return p;
}

}  // namespace imgsmith::gen
