// The paths an app writes under its own code. The image's code directory
// is owned by root (the app cannot change its code), so an app that makes
// outputs/ beside it, or keeps Django's SQLite file there, dies at its
// first write unless the image says otherwise.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "decisions.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;
namespace {

// Files larger than this are data, not code worth reading for paths.
constexpr std::uintmax_t kMaxSourceBytes = 1 << 20;
constexpr std::size_t kMaxLineBytes = 1000;

// A path as the app names it, relative to where it runs: "./outputs/" is
// "outputs", f"outputs/{day}" is "outputs". "" when it is not a relative
// path under the code (absolute, climbing out, a URL, a bare file name
// without a directory role).
std::string relative_path(std::string text) {
  if (const auto brace = text.find_first_of("{%"); brace != std::string::npos) {
    text = text.substr(0, brace);
    const auto slash = text.rfind('/');
    text = slash == std::string::npos ? std::string() : text.substr(0, slash);
  }
  while (text.rfind("./", 0) == 0) text.erase(0, 2);
  while (!text.empty() && text.back() == '/') text.pop_back();
  if (text.empty() || text == "." || text[0] == '/' || text[0] == '~' ||
      text.find("..") != std::string::npos || text.find("://") != std::string::npos ||
      text.find_first_of(" \t\\$:*?") != std::string::npos)
    return {};
  return text;
}

// Names of variables and options that hold a directory the app writes.
bool names_written_directory(const std::string& name) {
  static const std::regex kName(
      R"((output|outdir|out_dir|upload|temp|tmp|log|save|result|user|media|cache|input|download|checkpoint|ckpt|export|generated|artifact|static_root)\w*(dir|directory|path|folder|root)?s?)",
      std::regex::icase);
  static const std::regex kSuffix(R"(.*(dir|directory|folder|root)s?)", std::regex::icase);
  std::smatch m;
  return std::regex_search(name, m, kName) && std::regex_match(name, kSuffix);
}

struct Found {
  std::string path;
  bool directory;
  std::string why;
};

// What one line of Python says it writes, if anything.
std::vector<Found> written_by_line(const std::string& line) {
  std::vector<Found> out;
  // libstdc++'s regular expressions recurse per character: a long line (a
  // generated data module) would overflow the stack. Code that makes a
  // directory is never that long.
  if (line.size() > kMaxLineBytes) return out;
  // Each expression only where its words are: most lines have none.
  const bool makes =
      line.find("mkdir") != std::string::npos || line.find("makedirs") != std::string::npos;
  const bool sqlite = line.find("sqlite") != std::string::npos;
  const bool option = line.find("add_argument") != std::string::npos;
  const std::string lower = to_lower(line);
  const bool named =
      line.find('=') != std::string::npos &&
      (lower.find("dir") != std::string::npos || lower.find("root") != std::string::npos ||
       lower.find("folder") != std::string::npos);
  if (!makes && !sqlite && !option && !named) return out;
  static const std::regex kMakedirs(
      R"((?:os\.makedirs|os\.mkdir|makedirs)\(\s*f?["']([^"']+)["'])");
  static const std::regex kPathMkdir(R"(Path\(\s*f?["']([^"']+)["']\s*\)(?:\s*/[^.]*)?\.mkdir\()");
  static const std::regex kAssign(
      R"(^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:(?:os\.path\.join\(\s*[A-Za-z_][\w.()]*\s*,\s*)|(?:[A-Za-z_][\w.()]*\s*/\s*)|(?:Path\(\s*))?f?["']([^"']+)["'])");
  static const std::regex kOption(
      R"(add_argument\(\s*["']-{1,2}([\w-]+)["'][^)]*?default\s*=\s*f?["']([^"']+)["'])");
  static const std::regex kSqlite(
      R"(["']NAME["']\s*:\s*(?:[A-Za-z_][\w.()]*\s*/\s*|os\.path\.join\(\s*[A-Za-z_][\w.()]*\s*,\s*)?["']([^"']+\.sqlite3?)["'])");
  std::smatch m;
  if (makes && std::regex_search(line, m, kMakedirs)) {
    const std::string p = relative_path(m[1].str());
    if (!p.empty()) out.push_back({p, true, "creates it (makedirs)"});
  }
  if (makes && std::regex_search(line, m, kPathMkdir)) {
    const std::string p = relative_path(m[1].str());
    if (!p.empty()) out.push_back({p, true, "creates it (Path.mkdir)"});
  }
  if (sqlite && std::regex_search(line, m, kSqlite)) {
    const std::string p = relative_path(m[1].str());
    if (!p.empty()) out.push_back({p, false, "its SQLite database"});
  } else if (named && std::regex_search(line, m, kAssign) && names_written_directory(m[1].str())) {
    const std::string p = relative_path(m[2].str());
    if (!p.empty() && p.find('.') == std::string::npos)
      out.push_back({p, true, m[1].str() + " names it"});
  }
  if (option && std::regex_search(line, m, kOption)) {
    std::string option = m[1].str();
    for (char& c : option)
      if (c == '-') c = '_';
    const std::string p = relative_path(m[2].str());
    if (!p.empty() && p.find('.') == std::string::npos && names_written_directory(option))
      out.push_back({p, true, "--" + m[1].str() + "'s default"});
  }
  return out;
}

}  // namespace

std::vector<WritablePath> writable_paths(const Project& project,
                                         const std::vector<PackageVerdict>& verdicts,
                                         const std::vector<std::string>& told,
                                         const std::string& told_source) {
  std::vector<WritablePath> out;
  std::set<std::string> seen;
  auto add = [&](WritablePath w) {
    if (seen.insert(w.path).second) out.push_back(std::move(w));
  };
  for (const auto& t : told) {
    std::string p = relative_path(t);
    if (p.empty()) p = t;
    add({p, true, "listed", told_source + " writable"});
  }
  for (const auto& rel : project.python_sources) {
    const fs::path file = project.dir / rel;
    std::error_code ec;
    if (fs::file_size(file, ec) > kMaxSourceBytes || ec) continue;
    std::ifstream in(file, std::ios::binary);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t") != std::string::npos &&
          line[line.find_first_not_of(" \t")] == '#')
        continue;
      for (auto& f : written_by_line(line))
        add({f.path, f.directory, f.why, rel + ":" + std::to_string(n)});
    }
  }
  for (const auto& v : verdicts)
    if (v.fact != nullptr)
      for (const auto& w : v.fact->writes)
        add({w, true, v.name + " writes it where the app runs", v.fact->source});
  return out;
}

}  // namespace imgsmith::gen
