// Project detection's pyproject.toml (PEP 621, uv and Poetry), its lock
// files (uv.lock, poetry.lock) and a conda environment.yml: the project's
// dependencies, its Python, its scripts, where its packages come from.
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "detect_internal.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;
namespace {

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

void read_path_source(const std::string& name, const toml::node& value, const std::string& table,
                      std::vector<PathSource>& out) {
  if (const auto* t = value.as_table())
    if (const auto* path = (*t)["path"].as_string())
      out.push_back(
          {normalise_name(name), path->get(), static_cast<int>(value.source().begin.line), table});
}

// A table of scripts in the order its author wrote them (toml++ keeps a
// table sorted by key: "bench" would come before "gpt-engineer"), the one
// named as the project first: that is the command its README runs.
void add_scripts(const toml::table& table, const std::string& project,
                 std::vector<std::pair<std::string, std::string>>& scripts) {
  std::vector<std::tuple<bool, std::uint32_t, std::string, std::string>> ordered;
  for (const auto& [name, target] : table)
    ordered.emplace_back(normalise_name(std::string(name.str())) != normalise_name(project),
                         target.source().begin.line, std::string(name.str()),
                         target.is_string() ? target.as_string()->get() : std::string());
  std::sort(ordered.begin(), ordered.end());
  for (const auto& [not_named, line, name, target] : ordered) scripts.emplace_back(name, target);
}

}  // namespace

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
          if (auto r = parse_requirement(s->get(), "pyproject.toml [project] dependencies")) {
            py.project_dependencies.push_back(*r);
            if (use_deps) py.requirements.push_back(*r);
          }
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
      add_scripts(*s, (*project)["name"].value_or(std::string()), scripts);
    py.distribution = normalise_name((*project)["name"].value_or(std::string()));
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
        py.project_dependencies.push_back(r);
        if (use_deps) py.requirements.push_back(r);
      }
    if (const auto* s = (*poetry)["scripts"].as_table())
      add_scripts(*s, (*poetry)["name"].value_or(std::string()), scripts);
    if (py.distribution.empty())
      py.distribution = normalise_name((*poetry)["name"].value_or(std::string()));
  }
  return true;
}

bool pipenv_lists_packages(const fs::path& root, const std::string& file) {
  if (file == "Pipfile") {
    const toml::table doc = parse_toml(root / file);
    const auto* packages = doc["packages"].as_table();
    return packages != nullptr && !packages->empty();
  }
  // Pipfile.lock is JSON: "default" holds what the app runs with.
  const std::string text = read_text(root / file);
  const auto at = text.find("\"default\"");
  if (at == std::string::npos) return false;
  const auto open = text.find('{', at);
  const auto first = open == std::string::npos ? open : text.find_first_not_of(" \t\r\n", open + 1);
  return first != std::string::npos && text[first] != '}';
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

void pin_declared_from_lock(const fs::path& root, PythonProject& py,
                            std::vector<Evidence>& evidence) {
  // pdm.lock: [[package]] name, version (https://pdm-project.org/en/latest/usage/lockfile/);
  // pylock.toml: [[packages]] name, version (https://peps.python.org/pep-0751/);
  // Rye's requirements.lock: pip's format, NAME==VERSION lines
  // (https://rye.astral.sh/guide/sync/).
  std::string lock;
  const char* key = nullptr;
  for (const auto& [file, array] :
       {std::pair{"pylock.toml", "packages"}, {"pdm.lock", "package"}, {"requirements.lock", ""}})
    if (regular_or_absent(root / file)) {
      lock = file;
      key = array;
      break;
    }
  if (lock.empty()) return;
  // A name locked at two versions (one per platform marker) pins neither.
  std::map<std::string, std::string> locked;
  std::set<std::string> split;
  const auto add = [&](const std::string& name, const std::string& version) {
    const std::string n = normalise_name(name);
    const auto [at, added] = locked.emplace(n, version);
    if (!added && at->second != version) split.insert(n);
  };
  if (*key == '\0') {
    static const std::regex kPinned(
        R"(^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==\s*([^\s;#\\]+))");
    std::istringstream lines(read_text(root / lock));
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (line.size() < 300 && std::regex_search(line, m, kPinned)) add(m[1].str(), m[3].str());
    }
  } else {
    const toml::table doc = parse_toml(root / lock);
    if (const auto* packages = doc[key].as_array())
      for (std::size_t i = 0; i < packages->size(); ++i) {
        const auto* p = packages->get(i)->as_table();
        if (p == nullptr) continue;
        const auto* name = (*p)["name"].as_string();
        const auto* version = (*p)["version"].as_string();
        if (name != nullptr && version != nullptr) add(name->get(), version->get());
      }
  }
  for (const auto& n : split) locked.erase(n);
  if (locked.empty()) {
    evidence.push_back({lock,
                        "warning: lists no package with a version gen can read; the image "
                        "installs pyproject.toml's ranges, not what the lock holds"});
    return;
  }
  std::vector<std::string> pinned, missing;
  for (auto& r : py.requirements) {
    const auto it = locked.find(r.name);
    // A direct reference (name @ URL) is its own pin.
    if (r.text.find('@') != std::string::npos) continue;
    if (it == locked.end()) {
      if (split.count(r.name) == 0) missing.push_back(r.name);
      continue;
    }
    const auto semicolon = r.text.find(';');
    const std::string marker =
        semicolon == std::string::npos ? "" : " " + std::string(trim(r.text.substr(semicolon)));
    r.specifier = "==" + it->second;
    r.text =
        r.name + (r.extras.empty() ? "" : "[" + join(r.extras, ",") + "]") + r.specifier + marker;
    r.source += " (" + lock + ")";
    pinned.push_back(r.name + "==" + it->second);
  }
  const std::size_t transitive = locked.size() > pinned.size() ? locked.size() - pinned.size() : 0;
  if (!pinned.empty())
    evidence.push_back(
        {lock, "pins pyproject.toml's " + std::to_string(pinned.size()) +
                   (pinned.size() == 1 ? " dependency" : " dependencies") +
                   " to the versions it locks (" + join(pinned, ", ") + ")" +
                   (transitive == 0
                        ? std::string()
                        : "; the " + std::to_string(transitive) +
                              " other packages it locks resolve afresh when the image is built, "
                              "since the image installs pyproject.toml's dependencies, not " +
                              lock +
                              " (for every version as locked, write them to requirements.txt: "
                              "pdm export -o requirements.txt, or a copy of Rye's "
                              "requirements.lock; gen installs that exactly)")});
  if (!missing.empty())
    evidence.push_back({lock, "warning: " + join(missing, ", ") +
                                  (missing.size() == 1 ? " is" : " are") +
                                  " declared in pyproject.toml but not in the lock, so the lock is "
                                  "out of date (lock again with the tool that wrote it); the "
                                  "image installs the declared ranges"});
}

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
        // YAML may quote an item ("wandb==0.16", 'einops').
        if (item.size() >= 2 && (item[0] == '"' || item[0] == '\'') && item.back() == item[0])
          item = item.substr(1, item.size() - 2);
        if (!item.empty() && item[0] != '-') {  // options and -r includes are pip's, not packages
          const auto r = parse_requirement(item, env.file + ":" + std::to_string(number));
          // A URL or anything else pip takes is named as written.
          env.pip_requirements.emplace_back(r ? r->name : item, number);
        }
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

}  // namespace imgsmith::gen
