// Project detection: what a directory holds and what it will need from an
// image. Every conclusion is recorded with the file (and line) it came from,
// so `--explain` can show the reasoning and a wrong guess can be traced.
#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include "detect_internal.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;
namespace {

// A conda environment beside what pip installs: refused when pip installs
// nothing, else each conda package pip does not get is named.
void weigh_conda_environment(const fs::path& root, const CondaEnvironment& conda,
                             const std::vector<std::string>& req_files, PythonProject& py,
                             std::vector<Evidence>& evidence) {
  const std::string at = conda.file + ":" + std::to_string(conda.dependencies_line);
  const bool pip_sources =
      !req_files.empty() || !py.lock.empty() || !py.requirements.empty() || py.installable;
  if (!pip_sources) {
    // An image without the environment's packages cannot run the app, so
    // refuse rather than write one.
    std::vector<std::string> names;
    for (const auto& [name, line] : conda.conda_packages) names.push_back(name);
    for (const auto& [name, line] : conda.pip_requirements) names.push_back(name + " (pip)");
    if (names.size() > 5) {
      names.resize(5);
      names.push_back("...");
    }
    throw InputError(
        (root / conda.file).string() + ":" + std::to_string(conda.dependencies_line) +
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
  for (const auto& [name, line] : conda.conda_packages) {
    const std::string pip_name = name == "pytorch" ? "torch" : name;
    if (from_the_image.count(name) != 0 || name.rfind("cuda-", 0) == 0 || depends_on(py, pip_name))
      continue;
    missing.push_back(name + " (line " + std::to_string(line) + ")");
  }
  // The pip: section's packages are installed only when pip's files name
  // them too: never dropped without a word.
  std::vector<std::string> pip_missing;
  for (const auto& [name, line] : conda.pip_requirements)
    if (!depends_on(py, name)) pip_missing.push_back(name + " (line " + std::to_string(line) + ")");
  if (!pip_missing.empty())
    evidence.push_back({conda.file, "warning: its pip: section's packages not in " + pip_file +
                                        " will be missing from the image: " +
                                        join(pip_missing, ", ") + "; add them to " + pip_file});
  if (!missing.empty())
    evidence.push_back(
        {conda.file, "warning: conda packages not in " + pip_file +
                         " will be missing from the "
                         "image: " +
                         join(missing, ", ") + "; add those pip has to " + pip_file +
                         ", and install the others another way (--base, or your own RUN apt-get)"});
  if (py.python_constraint.empty() && !conda.python.empty()) {
    py.python_constraint = "==" + conda.python + ".*";
    py.python_constraint_source = conda.file + " python";
  }
}

// A Pipfile (pipenv) lists what the app needs, in a form pip cannot read:
// alone, it is refused, since an image without those packages would not
// run; beside files pip reads, it is named as not read.
void weigh_pipfile(const fs::path& root, const std::vector<std::string>& req_files,
                   const PythonProject& py, std::vector<Evidence>& evidence) {
  const char* file = nullptr;
  for (const char* name : {"Pipfile", "Pipfile.lock"})
    if (file == nullptr && regular_or_absent(root / name)) file = name;
  // Only the packages the app runs with count ([packages], or the lock's
  // "default"); a Pipfile of development tools alone asks nothing.
  if (file == nullptr || !pipenv_lists_packages(root, file)) return;
  const bool pip_sources =
      !req_files.empty() || !py.lock.empty() || !py.requirements.empty() || py.installable;
  if (!pip_sources)
    throw InputError((root / file).string() +
                     ": pipenv's dependencies, which gen does not read, and an image without them "
                     "would not run. Write them as requirements.txt (`pipenv requirements > "
                     "requirements.txt`), then run gen again");
  evidence.push_back({file,
                      "warning: not read (gen does not read pipenv's files); the image "
                      "gets what the project's pip files list, so keep them in step"});
}

// pip installs a requirement at the version a -c file pins, so that is
// the version whose CUDA build counts.
void apply_constraints(PythonProject& py, std::vector<Evidence>& evidence) {
  for (auto& r : py.requirements) {
    const auto c = py.constraints.find(r.name);
    if (c == py.constraints.end() || c->second.specifier.empty()) continue;
    const std::string& pin = c->second.specifier;
    r.specifier = exact_pin(pin) || r.specifier.empty() ? pin : r.specifier + "," + pin;
    evidence.push_back(
        {c->second.source, "constrains " + r.name + " (" + r.source + ") to " + r.specifier});
  }
}

// The project installed beside requirements files brings its own
// pyproject.toml dependencies: `pip install .` (or "-e ." in the
// requirements) resolves them, so they count for the image too. A
// requirement the files already name keeps their version.
void add_project_dependencies(PythonProject& py, std::vector<Evidence>& evidence) {
  if (!py.installable && !py.requirements_install_project) return;
  std::vector<Requirement> wanted = py.project_dependencies;
  for (const auto& extra : py.requirements_project_extras)
    if (const auto it = py.optional_dependencies.find(extra); it != py.optional_dependencies.end())
      wanted.insert(wanted.end(), it->second.begin(), it->second.end());
  if (wanted.empty()) return;
  py.project_brings_dependencies = py.installable;
  std::vector<std::string> added;
  for (const auto& r : wanted) {
    const bool named = std::any_of(py.requirements.begin(), py.requirements.end(),
                                   [&](const Requirement& q) { return q.name == r.name; });
    if (named) continue;
    py.requirements.push_back(r);
    added.push_back(r.text);
  }
  if (!added.empty())
    evidence.push_back({"pyproject.toml",
                        "the project's own dependencies, installed with it: " + join(added, ", ")});
}

// A torch CUDA extension: setup.py (or a pyproject build hook) building
// with torch.utils.cpp_extension's CUDAExtension.
void detect_cuda_extension(const fs::path& root, PythonProject& py,
                           std::vector<Evidence>& evidence) {
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
}

// The string literals of a Python list literal that starts at text[open]
// ('['), with the line each starts on; expressions between them are
// skipped (`'a' if cond else 'b'` yields both).
std::vector<std::pair<std::string, int>> list_strings(const std::string& text, std::size_t open) {
  std::vector<std::pair<std::string, int>> out;
  int depth = 0;
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + open, '\n'));
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (c == '#') {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      ++line;
      continue;
    }
    if (c == '[' || c == '(' || c == '{') ++depth;
    if (c == ']' || c == ')' || c == '}') {
      if (--depth == 0) break;
    }
    if (c == '\'' || c == '"') {
      const auto close = text.find(c, i + 1);
      if (close == std::string::npos || text.find('\n', i + 1) < close) break;
      if (depth == 1) out.emplace_back(text.substr(i + 1, close - i - 1), line);
      i = close;
    }
  }
  return out;
}

// setup.py's install_requires and console_scripts, where they are literal
// lists: the dependencies pip installs with the project, which decide what
// it needs from a GPU image as a requirements file's would.
void read_setup_py(const fs::path& root, PythonProject& py,
                   std::vector<std::pair<std::string, std::string>>& scripts,
                   std::vector<Evidence>& evidence, bool dependencies) {
  const std::string text = read_text(root / "setup.py");
  if (text.size() > 1'000'000) return;
  auto list_after = [&](const std::string& key) -> std::size_t {
    for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      const auto next = text.find_first_not_of(" \t\r\n=:\"'", at + key.size());
      // install_requires=[ or "console_scripts": [
      if (next != std::string::npos && text[next] == '[') return next;
    }
    return std::string::npos;
  };
  std::map<std::string, int> seen;
  std::vector<Requirement> found;
  if (const auto open = list_after("install_requires"); open != std::string::npos && dependencies)
    for (const auto& [literal, line] : list_strings(text, open))
      if (auto r = parse_requirement(literal, "setup.py:" + std::to_string(line))) {
        // A name written twice is a conditional (`'a<2' if old else 'a'`):
        // it is installed unpinned, the condition being pip's to judge.
        if (++seen[r->name] > 1) {
          for (auto& f : found)
            if (f.name == r->name) f.text = f.name, f.specifier.clear();
          continue;
        }
        found.push_back(*r);
      }
  for (const auto& r : found) py.requirements.push_back(r);
  py.requirements_from_setup_py = !found.empty();
  if (!found.empty())
    evidence.push_back(
        {found.front().source,
         std::to_string(found.size()) + " requirements from setup.py's install_requires"});
  if (const auto open = list_after("console_scripts"); open != std::string::npos && scripts.empty())
    for (const auto& [literal, line] : list_strings(text, open)) {
      const auto eq = literal.find('=');
      if (eq == std::string::npos) continue;
      const std::string name(trim(literal.substr(0, eq)));
      const std::string target(trim(literal.substr(eq + 1)));
      if (!name.empty() && !target.empty()) scripts.emplace_back(name, target);
    }
}

// Code that imports what no dependency file names: said, with the files
// below the top that may be the project's real requirements.
void undeclared_dependencies(const fs::path& root, const std::vector<fs::path>& python_sources,
                             PythonProject& py, std::vector<Evidence>& evidence) {
  const auto imports = third_party_imports(root, python_sources, builtin_tables().stdlib_modules);
  if (imports.empty()) return;
  std::string named;
  for (std::size_t i = 0; i < imports.size() && i < 6; ++i) {
    py.undeclared_imports.push_back(imports[i].text + " (" + imports[i].source + ")");
    named += (i == 0 ? "" : ", ") + py.undeclared_imports.back();
  }
  if (imports.size() > 6) named += " and " + std::to_string(imports.size() - 6) + " more";
  const std::string hint = nested_requirements_hint(root);
  evidence.push_back({imports.front().source,
                      "warning: the code imports " + named +
                          ", but no dependency file at the top names a package, so the image "
                          "will not have them and gen cannot tell whether they need a GPU; " +
                          (hint.empty() ? std::string("list them in requirements.txt") : hint)});
}

std::optional<PythonProject> detect_python(const fs::path& root,
                                           const std::string& chosen_requirements,
                                           std::vector<Evidence>& evidence,
                                           BuildContext& build_context, const Walk& walk) {
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
    // A lock that lists no package gen can read (a format it does not
    // know, a stub) must not make a project with dependencies look empty.
    std::vector<Requirement> declared = py.requirements;
    read_lock(root, py.lock, py);
    if (py.requirements.empty() && !declared.empty()) {
      py.requirements = std::move(declared);
      evidence.push_back(
          {py.lock,
           "warning: lists no package gen can read; gen judges the project (GPU, system "
           "packages, entrypoint) by pyproject.toml's " +
               std::to_string(py.requirements.size()) +
               " dependencies, and the image installs what the lock pins"});
    } else {
      evidence.push_back({py.lock, "installs exactly what the lock pins (" +
                                       std::to_string(py.requirements.size()) + " packages)"});
    }
  } else if (req_files.empty() && has_pyproject) {
    pin_declared_from_lock(root, py, evidence);
  }
  if (py.lock.empty() && !req_files.empty()) {
    recognised = true;
    read_requirements(root, req_files, py, evidence, build_context);
    py.install_files = req_files;
    // setup.py beside the requirements builds the project's own package (a
    // CUDA extension, most often): pip installs it after them.
    if (regular_or_absent(root / "setup.py")) {
      py.installable = true;
      evidence.push_back(
          {"setup.py", "a setuptools project: pip installs it after the requirements"});
      read_setup_py(root, py, scripts, evidence, false);
    }
    add_project_dependencies(py, evidence);
    apply_constraints(py, evidence);
    evidence.push_back(
        {req_files.front(), std::to_string(py.requirements.size()) + " requirements from " +
                                std::to_string(py.requirement_files.size()) + " file(s)"});
  } else if (py.lock.empty() && regular_or_absent(root / "setup.py")) {
    recognised = true;
    py.installable = true;
    py.requirements_need_source = true;
    evidence.push_back({"setup.py", "a setuptools project: pip installs it from the source tree"});
    read_setup_py(root, py, scripts, evidence, true);
  }

  if (conda) weigh_conda_environment(root, *conda, req_files, py, evidence);
  detect_cuda_extension(root, py, evidence);

  if (const std::string v = read_python_version_file(root); !v.empty()) {
    py.python_constraint = "==" + v + ".*";
    py.python_constraint_source = ".python-version";
  }
  if (!py.python_constraint.empty())
    evidence.push_back({py.python_constraint_source, "Python " + py.python_constraint});

  detect_entrypoint(root, py, scripts, evidence, recognised, walk.python_sources);
  if (!py.cmd.empty()) recognised = true;
  if (!recognised) return std::nullopt;
  if (py.requirements.empty() && py.lock.empty())
    undeclared_dependencies(root, walk.python_sources, py, evidence);
  weigh_pipfile(root, req_files, py, evidence);
  py.programs_run = programs_the_code_runs(root, walk.python_sources, builtin_tables().programs);
  return py;
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
  const Walk walk = walk_project(dir, /*look_inside=*/true);
  if (walk.truncated)
    p.evidence.push_back(
        {".", "stopped looking after " + std::to_string(kMaxEntries) + " entries"});
  p.has_cuda_sources = !walk.cuda_sources.empty();
  for (const auto& f : walk.python_sources) p.python_sources.push_back(relative_to_root(f, dir));
  for (const auto& [f, what] : walk.secret_files)
    p.secret_files.push_back({relative_to_root(f, dir), what});
  for (const auto& f : walk.lfs_pointers) p.lfs_pointers.push_back(relative_to_root(f, dir));
  if (regular_or_absent(dir / ".gitignore")) {
    std::istringstream lines(read_text(dir / ".gitignore"));
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      p.gitignore.push_back(line);
    }
  }
  p.python = detect_python(dir, requirements, p.evidence, build_context, walk);
  if (!p.python)
    p.cuda_cpp = detect_cuda_cpp(dir, walk, p.evidence, build_context);
  else if (p.has_cuda_sources)
    p.evidence.push_back(
        {relative_to_root(walk.cuda_sources.front(), dir),
         "CUDA sources in a Python project (an extension): a GPU image builds them on devel"});
  if (p.python || p.cuda_cpp) read_apt_txt(dir, p);
  read_cog_yaml(dir, p);
  if (!p.python && !p.cuda_cpp) {
    // Requirements one folder down (requirements/base.txt) are the likely
    // answer: named, with the flag that takes them.
    std::string hint = nested_requirements_hint(dir);
    if (!hint.empty()) hint += ", and --cmd";
    // A Cog project keeps its packages in cog.yaml, which pip cannot read.
    if (hint.empty() && regular_or_absent(dir / "cog.yaml"))
      hint =
          "cog.yaml lists this Cog project's packages (build.python_packages), which pip "
          "cannot install from there: write them to requirements.txt (and point "
          "build.python_requirements at it, for Cog) and add cog, whose HTTP server runs the "
          "predictor; then run gen with --cmd 'python -m cog.server.http' --port 5000";
    throw InputError(
        dir.string() +
        ": found nothing gen knows how to build. It looked for Python "
        "(requirements*.txt, pyproject.toml, setup.py, main.py, app.py, app/main.py, "
        "server.py, train.py, a package with __main__.py, *.ipynb) and CUDA C/C++ (CMakeLists.txt "
        "with CUDA, *.cu files)" +
        (hint.empty() ? std::string() : "; " + hint));
  }
  p.outside_paths = build_context.outside_paths();
  return p;
}

}  // namespace imgsmith::gen
