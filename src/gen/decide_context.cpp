// What stays out of the build context: what git leaves out, and secrets
// found by what files hold rather than by their names.
#include "decisions.hpp"

namespace imgsmith::gen {

std::vector<std::string> docker_patterns(const std::string& gitignore_line,
                                         const std::string& prefix) {
  std::string line = gitignore_line;
  // Trailing spaces are ignored by git unless escaped.
  while (!line.empty() && line.back() == ' ' && (line.size() < 2 || line[line.size() - 2] != '\\'))
    line.pop_back();
  if (line.empty() || line[0] == '#') return {};
  std::string negate;
  if (line[0] == '!') {
    negate = "!";
    line.erase(0, 1);
  } else if (line.rfind("\\!", 0) == 0 || line.rfind("\\#", 0) == 0) {
    line.erase(0, 1);
  }
  // A trailing slash matches directories only; Docker matches a directory
  // and everything under it by the same name, so it goes.
  while (!line.empty() && line.back() == '/') line.pop_back();
  if (line.empty()) return {};
  const bool anchored = line.find('/') != std::string::npos;
  while (!line.empty() && line[0] == '/') line.erase(0, 1);
  if (line.empty()) return {};
  if (anchored || line.rfind("**/", 0) == 0) return {negate + prefix + line};
  return {negate + prefix + "**/" + line};
}

ContextHygiene context_hygiene(const Project& project, const std::string& prefix) {
  ContextHygiene out;
  for (std::size_t i = 0; i < project.gitignore.size(); ++i)
    for (auto& pattern : docker_patterns(project.gitignore[i], prefix))
      out.from_git.push_back(std::move(pattern));
  if (!out.from_git.empty())
    out.reasons.push_back({".gitignore", std::to_string(out.from_git.size()) +
                                             " patterns: what git leaves out stays out of the "
                                             "build context (.dockerignore)"});
  for (const auto& [path, what] : project.secret_files) {
    out.secrets.push_back(prefix + path);
    out.warnings.push_back(path + " holds " + what +
                           ": left out of the build context (.dockerignore); give it to the "
                           "container at run time (a secret or a mounted file), never in a layer");
  }
  for (const auto& path : project.lfs_pointers)
    out.warnings.push_back(path +
                           " is a Git LFS pointer, not the file it names: run `git lfs pull` "
                           "before the build, or the image ships the pointer in its place");
  return out;
}

}  // namespace imgsmith::gen
