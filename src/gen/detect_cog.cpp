// cog.yaml, Replicate's Cog (https://cog.run/yaml): a project that ships one
// has said how its container is built and served. gen reads what it can
// use as the project's own declaration (build.system_packages, like apt.txt;
// build.python_version, over a range pyproject.toml allows) and keeps the predictor
// (`predict: "predict.py:Predictor"`), which only Cog's HTTP server runs, so
// that the plan can say when its command is another.
#include <regex>
#include <sstream>

#include "detect_internal.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;

namespace {

// A YAML scalar as cog.yaml writes them: quoted or plain, a comment after.
std::string scalar(std::string_view text) {
  std::string value(trim(text));
  if (!value.empty() && (value.front() == '"' || value.front() == '\'')) {
    const auto close = value.find(value.front(), 1);
    return close == std::string::npos ? value.substr(1) : value.substr(1, close - 1);
  }
  if (const auto hash = value.find(" #"); hash != std::string::npos) value = value.substr(0, hash);
  return std::string(trim(value));
}

int indent_of(const std::string& line) { return static_cast<int>(line.find_first_not_of(' ')); }

}  // namespace

void read_cog_yaml(const fs::path& root, Project& p) {
  const fs::path path = root / "cog.yaml";
  if (!p.python || !regular_or_absent(path)) return;
  PythonProject& py = *p.python;
  static const std::regex kPackage(R"([a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+~:*-]+)?)");
  static const std::regex kVersion(R"(^(3\.\d{1,2})(\.\d{1,3})?$)");
  std::istringstream lines(read_text(path));
  std::string line, section, list;
  int number = 0, list_indent = -1;
  std::size_t packages = 0, python_packages = 0;
  std::string python_requirements;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > 1000) continue;
    const std::string text(trim(line));
    if (text.empty() || text[0] == '#') continue;
    const int indent = indent_of(line);
    const std::string where = "cog.yaml:" + std::to_string(number);
    if (text[0] == '-' && !list.empty() && indent >= list_indent) {
      const std::string item = scalar(text.substr(1));
      if (list == "system_packages") {
        if (item.size() > 200 || !std::regex_match(item, kPackage)) {
          p.evidence.push_back({where, "warning: '" + item.substr(0, 60) +
                                           "' in build.system_packages is not a Debian package "
                                           "name; gen leaves it out"});
          continue;
        }
        bool listed = false;
        for (const auto& [source, spec] : p.system_packages) listed = listed || spec == item;
        if (!listed) p.system_packages.push_back({where, item});
        ++packages;
      } else if (list == "python_packages") {
        ++python_packages;
      }
      continue;
    }
    list.clear();
    const auto colon = text.find(':');
    if (colon == std::string::npos) continue;
    const std::string key(trim(text.substr(0, colon)));
    const std::string value = scalar(text.substr(colon + 1));
    if (indent == 0) {
      section = key;
      // Cog before 0.1 called them environment: and model: (docs/yaml.md then).
      if (section == "environment") section = "build";
      if ((key == "predict" || key == "model") && !value.empty()) {
        py.cog_predictor = value;
        py.cog_source = where;
      }
      continue;
    }
    if (section != "build") continue;
    if ((key == "system_packages" || key == "python_packages") && value.empty()) {
      list = key;
      list_indent = indent;
    } else if (std::smatch version;
               key == "python_version" && std::regex_match(value, version, kVersion)) {
      // The container's exact Python wins over a range (pyproject's
      // requires-python); .python-version or a conda file's stays.
      if (py.python_constraint.rfind("==", 0) != 0) {
        py.python_constraint = "==" + version[1].str() + ".*";
        py.python_constraint_source = where + " build.python_version";
        p.evidence.push_back({py.python_constraint_source, "Python " + py.python_constraint});
      }
    } else if (key == "python_requirements") {
      python_requirements = value;
    } else if (key == "gpu" && value == "true") {
      p.evidence.push_back({where, "cog.yaml builds for a GPU (build.gpu: true)"});
    }
  }
  if (packages != 0)
    p.evidence.push_back({"cog.yaml", std::to_string(packages) +
                                          " system package(s) from build.system_packages, "
                                          "installed with apt"});
  // python_packages are Cog's own requirements list; pip here installs the
  // project's requirements files, so a list no file repeats is said.
  if (python_packages != 0 && py.requirement_files.empty() && !py.installable)
    p.evidence.push_back(
        {"cog.yaml", "warning: build.python_packages lists " + std::to_string(python_packages) +
                         " package(s) that no requirements file installs: the image will not "
                         "have them; write them to requirements.txt (what Cog's "
                         "build.python_requirements reads)"});
  if (!python_requirements.empty())
    p.evidence.push_back({"cog.yaml", "build.python_requirements names " + python_requirements});
}

}  // namespace imgsmith::gen
