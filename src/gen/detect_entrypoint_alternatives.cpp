// Project detection's second look at an inferred entrypoint: the other
// programs a project holds. gen's rules pick one command, but a repository
// often has several (a FastAPI server beside a Gradio demo, a controller
// beside its workers, a CLI beside an API, a CUDA program beside its Python
// reference). Picking one is a guess; the warning here makes the guess
// visible and says how to choose, so that a wrong one is never silent.
#include <algorithm>
#include <set>
#include <string_view>
#include <system_error>

#include "detect_internal.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;

bool in_nested_project(const fs::path& file, const fs::path& root) {
  for (fs::path dir = file.parent_path(); dir != root && dir.has_relative_path();
       dir = dir.parent_path()) {
    std::error_code ec;
    for (const char* marker : {"requirements.txt", "pyproject.toml", "setup.py", "Dockerfile"})
      if (fs::exists(dir / marker, ec)) return true;
  }
  return false;
}

bool has_main_guard(const std::string& text) {
  for (std::size_t at = text.find("__name__"); at != std::string::npos;
       at = text.find("__name__", at + 8)) {
    const std::size_t end = text.find('\n', at);
    const std::string_view line(text.data() + at,
                                (end == std::string::npos ? text.size() : end) - at);
    if (line.find("__main__") != std::string_view::npos) return true;
  }
  return false;
}

bool helper_script(const std::string& name) {
  return name == "setup.py" || name == "conftest.py" || name == "noxfile.py" ||
         name == "manage.py" || name == "fabfile.py" || name == "tasks.py" ||
         name.rfind("test_", 0) == 0 || name.rfind('_', 0) == 0;
}

namespace {

// What a server's app is, in a user's words.
const char* describe(ServerKind kind) {
  switch (kind) {
    case ServerKind::fastapi:
      return "a FastAPI app";
    case ServerKind::flask:
      return "a Flask app";
    case ServerKind::streamlit:
      return "a Streamlit app";
    case ServerKind::gradio:
      return "a Gradio app";
    case ServerKind::none:
      break;
  }
  return "a server";
}

// At most this many alternatives are named; the count says the rest.
constexpr std::size_t kNamed = 5;

// A C, C++ or CUDA source with its own main(): a program a Makefile builds.
bool has_main_function(const std::string& text) {
  for (const char* form : {"int main(", "int main (", "void main("})
    if (text.find(form) != std::string::npos) return true;
  return false;
}

}  // namespace

void warn_other_entrypoints(const fs::path& root, EntrypointRule rule, PythonProject& py,
                            const std::vector<fs::path>& python_sources, ServedFiles& served_files,
                            std::vector<Evidence>& evidence) {
  if (rule != EntrypointRule::server && rule != EntrypointRule::script) return;
  const std::string chosen = py.cmd_source.substr(0, py.cmd_source.find(':'));
  std::vector<std::string> others;
  std::set<std::string> named;

  // Other servers: an app object anywhere in this project's code (not its
  // tests, examples or nested projects); a Gradio module only when it
  // launches (a layout module that imports gradio serves nothing), and a
  // Streamlit script only at the top (streamlit runs files, not modules).
  for (const auto& file : python_sources) {
    const std::string rel = relative_to_root(file, root);
    if (rel == chosen || is_test_path(rel) || in_nested_project(file, root)) continue;
    const ServerKind kind = served_files.read(file).kind;
    if (kind == ServerKind::none) continue;
    if (kind == ServerKind::streamlit && rel.find('/') != std::string::npos) continue;
    others.push_back(rel + " (" + describe(kind) + ")");
    named.insert(rel);
  }
  const std::size_t servers = others.size();

  // Scripts at the top that run as programs, when gen's choice was a script
  // or a server it found by its code rather than by a conventional name.
  const std::vector<std::string> conventional = conventional_server_files(root);
  const bool guessed_by_code =
      rule == EntrypointRule::script ||
      std::find(conventional.begin(), conventional.end(), chosen) == conventional.end();
  bool builds_native = false;
  if (guessed_by_code) {
    std::error_code ec;
    builds_native = fs::exists(root / "Makefile", ec) || fs::exists(root / "makefile", ec) ||
                    fs::exists(root / "CMakeLists.txt", ec);
    std::vector<std::string> scripts, programs;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      std::error_code type_ec;
      if (!e.is_regular_file(type_ec)) continue;
      const std::string name = e.path().filename().string();
      const std::string ext = e.path().extension().string();
      if (ext == ".py" && name != chosen && named.count(name) == 0 && !helper_script(name) &&
          has_main_guard(read_text(e.path())))
        scripts.push_back(name + " (a script)");
      if (builds_native && (ext == ".c" || ext == ".cc" || ext == ".cpp" || ext == ".cu") &&
          has_main_function(read_text(e.path())))
        programs.push_back(name + " (a program the " +
                           (fs::exists(root / "CMakeLists.txt", type_ec)
                                ? std::string("CMake")
                                : std::string("Makefile")) +
                           " build makes)");
    }
    std::sort(scripts.begin(), scripts.end());
    std::sort(programs.begin(), programs.end());
    others.insert(others.end(), scripts.begin(), scripts.end());
    others.insert(others.end(), programs.begin(), programs.end());
  }
  if (others.empty()) return;

  const std::size_t count = others.size();
  if (others.size() > kNamed) {
    others.resize(kNamed);
    others.push_back(std::to_string(count - kNamed) + " more");
  }
  const std::string how = rule == EntrypointRule::server && !guessed_by_code
                              ? "the app in a conventional file"
                          : rule == EntrypointRule::server ? "an app it found by its code"
                                                           : "a script by its name";
  const bool speaks_of_port = rule == EntrypointRule::server || servers != 0;
  if (speaks_of_port) py.port_said = true;
  evidence.push_back(
      {chosen, "warning: gen guessed the command: it runs " + join(py.cmd, " ") + " (" + how +
                   "), but the project holds " + std::to_string(count) + " other program" +
                   (count == 1 ? "" : "s") + " an image could run: " + join(others, ", ") +
                   "; if the image should run another, pass --cmd (or set cmd in imgsmith.toml's "
                   "[gen])" +
                   (speaks_of_port ? ", and the port it publishes follows from that command"
                                   : std::string())});
}

}  // namespace imgsmith::gen
