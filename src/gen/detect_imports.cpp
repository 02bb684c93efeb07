// The modules a project's code imports that neither Python's standard
// library (data/python-stdlib.json) nor the project itself holds: what a
// dependency file must name. A project with code but no dependency file
// would otherwise become a bare interpreter, with "nothing uses a GPU" said
// of code that imports torch.
#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include "detect_internal.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;

namespace {

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The top-level module names one module-level import line names:
// `import a.b, c as d` -> a, c; `from a.b import x` -> a; a relative
// import (`from . import x`) names none. Plain parsing: libstdc++'s regex
// recurses per character.
std::vector<std::string> imported_tops(const std::string& line) {
  std::vector<std::string> tops;
  auto word_at = [&](std::size_t at) {
    std::size_t end = at;
    while (end < line.size() && identifier_char(line[end])) ++end;
    return line.substr(at, end - at);
  };
  if (line.rfind("from ", 0) == 0) {
    std::size_t at = line.find_first_not_of(' ', 5);
    if (at == std::string::npos || line[at] == '.') return tops;
    const std::string top = word_at(at);
    if (!top.empty()) tops.push_back(top);
    return tops;
  }
  if (line.rfind("import ", 0) != 0) return tops;
  std::string rest = line.substr(7);
  if (const auto hash = rest.find('#'); hash != std::string::npos) rest.resize(hash);
  std::istringstream parts(rest);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const auto at = part.find_first_not_of(" \t(");
    if (at == std::string::npos) continue;
    std::size_t end = at;
    while (end < part.size() && identifier_char(part[end])) ++end;
    if (end > at) tops.push_back(part.substr(at, end - at));
  }
  return tops;
}

}  // namespace

std::vector<Evidence> third_party_imports(const fs::path& root,
                                          const std::vector<fs::path>& python_sources,
                                          const std::set<std::string>& stdlib) {
  // The project's own modules: every file's stem and every folder on the
  // way to it (a script imports its siblings; src/ layouts import from src).
  std::set<std::string> local;
  for (const auto& file : python_sources) {
    fs::path rel = fs::path(relative_to_root(file, root));
    local.insert(rel.stem().string());
    for (const auto& part : rel.parent_path()) local.insert(part.string());
  }
  // And whatever sits at the top (a package of stubs or data, modules/).
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) local.insert(e.path().stem().string());
  std::map<std::string, std::string> first_seen;  // module -> "file:line"
  std::vector<std::string> order;
  std::size_t read = 0;
  for (const auto& file : python_sources) {
    if (++read > 400) break;  // the shallowest files say what the app needs
    if (!regular_or_absent(file)) continue;
    std::istringstream lines(read_text(file));
    std::string line;
    bool in_string = false;
    for (int number = 1; std::getline(lines, line); ++number) {
      if (line.size() > 1000) continue;
      // A docstring at the margin may hold example code.
      for (std::size_t at = line.find("\"\"\""); at != std::string::npos;
           at = line.find("\"\"\"", at + 3))
        in_string = !in_string;
      if (in_string || (line.rfind("import ", 0) != 0 && line.rfind("from ", 0) != 0)) continue;
      for (const auto& top : imported_tops(line)) {
        if (stdlib.count(top) != 0 || local.count(top) != 0 || top == "__future__") continue;
        if (first_seen.emplace(top, relative_to_root(file, root) + ":" + std::to_string(number))
                .second)
          order.push_back(top);
      }
    }
  }
  std::vector<Evidence> out;
  for (const auto& module : order) out.push_back({first_seen[module], module});
  return out;
}

std::vector<std::pair<std::string, std::string>> programs_the_code_runs(
    const fs::path& root, const std::vector<fs::path>& python_sources,
    const std::map<std::string, std::map<std::string, std::string>>& known) {
  // A call that runs or looks for a program (asyncio's
  // create_subprocess_exec and _shell too), its first argument a string
  // (or a list that starts with one); or any list that starts with a known
  // program's name, the way code builds a command before running it.
  static const std::regex kCall(
      R"((subprocess\.\w+|\bsp\.\w+|create_subprocess_\w+|os\.system|os\.popen|shutil\.which|\brun|\bPopen|check_output|check_call)\s*\(\s*\[?\s*[fr]?["']([A-Za-z0-9_.+-]+))");
  static const std::regex kList(R"(\[\s*["']([A-Za-z0-9_.+-]+)["']\s*,)");
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  std::size_t read = 0;
  for (const auto& file : python_sources) {
    if (++read > 400) break;
    if (!regular_or_absent(file)) continue;
    std::istringstream lines(read_text(file));
    std::string line;
    bool list_opened = false;  // the line before ended with "[": a list written down the page
    for (int number = 1; std::getline(lines, line); ++number) {
      const bool in_list = list_opened;
      const auto last = line.find_last_not_of(" \t\r");
      list_opened = last != std::string::npos && line[last] == '[';
      // Only short code lines that may name a program are worth a regular
      // expression (libstdc++'s recurses per character).
      const auto code = line.find_first_not_of(" \t");
      if (line.size() > 500 || code == std::string::npos || line[code] == '#' ||
          (line.find('"') == std::string::npos && line.find('\'') == std::string::npos))
        continue;
      auto take = [&](const std::string& program) {
        if (known.count(program) != 0 && seen.insert(program).second)
          out.emplace_back(program, relative_to_root(file, root) + ":" + std::to_string(number));
      };
      for (auto it = std::sregex_iterator(line.begin(), line.end(), kCall);
           it != std::sregex_iterator(); ++it)
        take((*it)[2].str());
      for (auto it = std::sregex_iterator(line.begin(), line.end(), kList);
           it != std::sregex_iterator(); ++it)
        take((*it)[1].str());
      static const std::regex kFirstItem(R"(^\s*["']([A-Za-z0-9_.+-]+)["']\s*,)");
      std::smatch m;
      if (in_list && std::regex_search(line, m, kFirstItem)) take(m[1].str());
    }
  }
  return out;
}

std::vector<std::string> nested_requirement_files(const fs::path& root) {
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (it->is_directory(type_ec)) {
      if (it.depth() >= 2 || name[0] == '.' || kSkippedDirs.count(name) != 0 || is_test_path(name))
        it.disable_recursion_pending();
      continue;
    }
    if (it.depth() == 0) continue;  // the top's own were read already
    // requirements*.txt anywhere, and any .txt in a requirements/ folder
    // (requirements/base.txt).
    const bool in_folder = it->path().parent_path().filename() == "requirements";
    if ((name.rfind("requirements", 0) == 0 || in_folder) && it->path().extension() == ".txt" &&
        it->is_regular_file(type_ec))
      found.push_back(relative_to_root(it->path(), root));
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string nested_requirements_hint(const fs::path& root) {
  const auto nested = nested_requirement_files(root);
  if (nested.empty()) return "";
  return nested.front() + " lists dependencies: pass --requirements " + nested.front() +
         (nested.size() > 1 ? " (or one of " + join(nested, ", ") + ")" : std::string());
}

}  // namespace imgsmith::gen
