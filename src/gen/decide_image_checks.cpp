// The generated image checks itself at build time: every shared library
// the app ships resolves, and what the app's command imports imports. A
// missing libGL then fails `docker build`, naming the file, the library
// and the package, instead of the container at its first start.
#include <algorithm>
#include <regex>

#include "decisions.hpp"

namespace imgsmith::gen {
namespace {

// The Python file or module the command starts, as far as its words say.
void entry_points(const std::vector<std::string>& cmd, ImageCheck& check) {
  if (cmd.empty()) return;
  const std::string tool = cmd[0].substr(cmd[0].rfind('/') + 1);
  static const std::regex kModuleObject(R"(([A-Za-z_][\w.]*):[A-Za-z_][\w.()'"]*)");
  for (std::size_t i = 1; i < cmd.size(); ++i) {
    const std::string& w = cmd[i];
    std::smatch m;
    if (tool.rfind("python", 0) == 0) {
      if (w == "-m" && i + 1 < cmd.size()) {
        check.entry_modules.push_back(cmd[i + 1]);
        return;
      }
      if (w.ends_with(".py")) {
        check.entry_files.push_back(w);
        return;
      }
      if (!w.empty() && w[0] == '-') continue;
      return;
    }
    if (tool == "streamlit" && w.ends_with(".py")) {
      check.entry_files.push_back(w);
      return;
    }
    const std::string value = w.rfind("--app=", 0) == 0 ? w.substr(6) : w;
    if (std::regex_match(value, m, kModuleObject)) {
      check.entry_modules.push_back(m[1].str());
      return;
    }
  }
}

}  // namespace

ImageCheck image_check(const Plan& plan, bool verify, const Tables& tables) {
  ImageCheck check;
  if (!verify) {
    check.why = "--no-verify: the image does not check its libraries and imports at build time";
    return check;
  }
  check.enabled = true;
  if (!plan.python.empty()) {
    check.library_roots = {"/opt/venv", "/app"};
    if (plan.managed_python) check.library_roots.push_back("/opt/python");
    entry_points(plan.cmd, check);
  } else {
    check.library_roots = {"/opt/app"};
  }
  // The driver's libraries by the name before ".so": libnvidia-container
  // mounts them by that prefix, whatever the driver's version suffix.
  for (const auto& soname : tables.driver_injected) {
    const std::string prefix = soname.substr(0, soname.find(".so") + 3);
    if (std::find(check.allowed_missing.begin(), check.allowed_missing.end(), prefix) ==
        check.allowed_missing.end())
      check.allowed_missing.push_back(prefix);
  }
  const std::string os = plan.os.empty() ? std::string("debian") : plan.os;
  const auto base = tables.sonames_in_base.find(os);
  for (const auto& [soname, by_os] : tables.sonames) {
    // What the base image carries cannot go missing: not worth a line.
    if (base != tables.sonames_in_base.end() && base->second.count(soname) != 0) continue;
    const auto it = by_os.find(os);
    if (it != by_os.end()) check.soname_packages.emplace_back(soname, it->second);
  }
  check.why =
      "the final stage checks at build time that every shared library under " +
      join(check.library_roots, ", ") + " resolves (the driver's, mounted at run time, " +
      "allowed missing)" +
      (check.entry_files.empty() && check.entry_modules.empty()
           ? std::string()
           : " and that what " +
                 join(check.entry_files.empty() ? check.entry_modules : check.entry_files, ", ") +
                 " imports imports");
  return check;
}

}  // namespace imgsmith::gen
