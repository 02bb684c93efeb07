// Project detection's walk over the project, and the reading of its files:
// what is there, and what each file holds, with messages that say what to
// fix when a path is not what gen expects.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include "detect_internal.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;

const std::set<std::string> kSkippedDirs = {
    ".git", ".hg",          ".svn",        ".venv",         "venv",
    "env",  "node_modules", "__pycache__", ".imgsmith",     "build",
    "dist", ".tox",         ".mypy_cache", ".pytest_cache", "site-packages"};

constexpr int kMaxDepth = 8;

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
  std::string text = s.str();
  // Editors on Windows save UTF-8 with a byte-order mark, which pip and
  // TOML readers skip; so does gen.
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  return text;
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

namespace {

// Files this small or smaller are read for what they are: a Git LFS
// pointer is about 130 bytes, a key file a few KiB.
constexpr std::uintmax_t kLfsPointerMax = 1024;
constexpr std::uintmax_t kSecretFileMax = 64 * 1024;

// Key files by content, whatever they are named (gitleaks' private-key and
// GCP service-account rules): the names in .dockerignore miss
// "prod-1234.json" or "deploy.txt".
void read_small_file(const fs::path& path, const std::string& ext, Walk& w) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec || size == 0) return;
  const bool text_kind = ext.empty() || ext == ".json" || ext == ".pem" || ext == ".key" ||
                         ext == ".txt" || ext == ".yaml" || ext == ".yml" || ext == ".toml" ||
                         ext == ".ini" || ext == ".cfg" || ext == ".conf" || ext == ".env";
  if (size > kLfsPointerMax && (!text_kind || size > kSecretFileMax)) return;
  std::ifstream in(path, std::ios::binary);
  std::string head(static_cast<std::size_t>(std::min(size, kSecretFileMax)), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (size <= kLfsPointerMax && head.rfind("version https://git-lfs.github.com/spec/v1", 0) == 0) {
    w.lfs_pointers.push_back(path);
    return;
  }
  if (!text_kind) return;
  if (head.find("\"service_account\"") != std::string::npos &&
      head.find("\"private_key\"") != std::string::npos)
    w.secret_files.emplace_back(path, "a cloud service account's key");
  else if (head.find("-----BEGIN ") != std::string::npos &&
           head.find("PRIVATE KEY-----") != std::string::npos)
    w.secret_files.emplace_back(path, "a private key");
}

}  // namespace

Walk walk_project(const fs::path& root, bool look_inside) {
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
    if (ext == ".py" && !is_test_path(relative_to_root(p, root))) w.python_sources.push_back(p);
    if (look_inside) read_small_file(p, ext, w);
  }
  auto by_path = [&](const fs::path& a, const fs::path& b) {
    const auto da = std::distance(a.begin(), a.end());
    const auto db = std::distance(b.begin(), b.end());
    return da != db ? da < db : a < b;
  };
  std::sort(w.cuda_sources.begin(), w.cuda_sources.end(), by_path);
  std::sort(w.cpp_sources.begin(), w.cpp_sources.end(), by_path);
  std::sort(w.cmake_lists.begin(), w.cmake_lists.end(), by_path);
  std::sort(w.python_sources.begin(), w.python_sources.end(), by_path);
  return w;
}

}  // namespace imgsmith::gen
