// What the pieces of project detection share and nothing else in gen needs:
// the walk over the project and the reading of its files (detect_walk.cpp),
// the Python project's files (detect_requirements.cpp, detect_pyproject.cpp,
// detect_entrypoint.cpp), CMake's commands (cmake_lexer.cpp) and the CUDA
// C/C++ project (detect_cuda_cpp.cpp). detect.cpp puts them together.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gen_internal.hpp"
#include "imgsmith/gen/gen.hpp"

namespace imgsmith::gen {

// ----- the project walk (detect_walk.cpp) ---------------------------------

// Directories that never hold the project's own sources.
extern const std::set<std::string> kSkippedDirs;
// The walk stops after this many entries.
inline constexpr std::size_t kMaxEntries = 50000;

// "a directory", "a FIFO (named pipe)"...: what a path that is not a
// regular file is, for messages.
std::string kind_of(const std::filesystem::file_status& status);
// True for a regular file, false when nothing is there; throws InputError
// for anything else by that name.
bool regular_or_absent(const std::filesystem::path& path);
// The whole file, less a UTF-8 byte-order mark; throws InputError, naming
// it, when it cannot be read.
std::string read_text(const std::filesystem::path& path);
std::string relative_to_root(const std::filesystem::path& path, const std::filesystem::path& root);
// True when a directory of the path holds tests, examples or benchmarks.
bool is_test_path(const std::string& rel);
// The project directory's name as a Docker image name ("app" when none fits).
std::string image_name(const std::filesystem::path& dir);

struct Walk {
  std::vector<std::filesystem::path> cuda_sources;    // *.cu, *.cuh
  std::vector<std::filesystem::path> cpp_sources;     // *.cpp, *.cc, *.cxx
  std::vector<std::filesystem::path> cmake_lists;     // every CMakeLists.txt, top first
  std::vector<std::filesystem::path> python_sources;  // *.py, tests left out
  // Small files whose content is a secret (a private key, a cloud service
  // account's key file), with what they hold, and Git LFS pointer files
  // (a checkout without `git lfs pull`).
  std::vector<std::pair<std::filesystem::path, std::string>> secret_files;
  std::vector<std::filesystem::path> lfs_pointers;
  bool truncated = false;
};

// `look_inside`: also read small files for what they are (secrets, Git LFS
// pointers), which only the project's own walk needs.
Walk walk_project(const std::filesystem::path& root, bool look_inside = false);

// ----- imports no dependency names (detect_imports.cpp) -------------------

// The top-level modules the project's code imports at module level that
// are neither in `stdlib` nor the project's own, first-seen order, each as
// {"server.py:3", "gradio"}.
std::vector<Evidence> third_party_imports(const std::filesystem::path& root,
                                          const std::vector<std::filesystem::path>& python_sources,
                                          const std::set<std::string>& stdlib);
// The programs of `known` (a program name -> anything) the project's code
// runs: the first word of a string given to subprocess's calls, os.system,
// os.popen or shutil.which, or of a command list (["ffmpeg", "-i", ...]),
// each once, first-seen order, with where: {"ffmpeg", "audio.py:12"}.
std::vector<std::pair<std::string, std::string>> programs_the_code_runs(
    const std::filesystem::path& root, const std::vector<std::filesystem::path>& python_sources,
    const std::map<std::string, std::map<std::string, std::string>>& known);
// requirements*.txt files below the top (requirements/full/requirements.txt),
// two folders deep at most, relative to the project.
std::vector<std::string> nested_requirement_files(const std::filesystem::path& root);
// "requirements/base.txt lists dependencies: pass --requirements ..." for
// messages; "" when there are none.
std::string nested_requirements_hint(const std::filesystem::path& root);

// ----- requirements files (detect_requirements.cpp) -----------------------

// The requirements files that install the app, relative to the project.
std::vector<std::string> choose_requirements(const std::filesystem::path& root,
                                             const std::string& chosen,
                                             std::vector<Evidence>& evidence);
// Reads `files` as pip would, following their -r and -c includes, into `py`.
void read_requirements(const std::filesystem::path& root, const std::vector<std::string>& files,
                       PythonProject& py, std::vector<Evidence>& evidence,
                       BuildContext& build_context);

// ----- pyproject.toml, lock files, conda (detect_pyproject.cpp) -----------

// A dependency that pyproject.toml installs from a local directory:
// [tool.uv.sources] name = { path = "../../libs/common" }, or Poetry's
// name = { path = "../../libs/common", develop = true }.
struct PathSource {
  std::string name;   // PEP 503
  std::string path;   // as written, relative to the project
  int line = 0;       // in pyproject.toml
  std::string table;  // "[tool.uv.sources]"
};

// Reads pyproject.toml into `py`, its dependencies only when `use_deps`;
// false when it describes no Python project.
bool read_pyproject(const std::filesystem::path& root, PythonProject& py,
                    std::vector<Evidence>& evidence,
                    std::vector<std::pair<std::string, std::string>>& scripts, bool use_deps,
                    std::vector<PathSource>& path_sources);
// Replaces py's requirements with what the lock file (uv.lock, poetry.lock) pins.
void read_lock(const std::filesystem::path& root, const std::string& lock, PythonProject& py);
// A lock that gen's install does not run (PDM's pdm.lock, PEP 751's
// pylock.toml; the image installs pyproject.toml's dependencies with pip):
// each declared dependency is pinned to the version the lock holds, so the
// image (and gen's GPU decisions) get the locked torch, not the newest the
// range allows. Said in evidence, with what stays unpinned.
void pin_declared_from_lock(const std::filesystem::path& root, PythonProject& py,
                            std::vector<Evidence>& evidence);

// A conda environment file, read as far as gen needs: its conda packages,
// its Python, and whether it has a pip: section. YAML in the shape conda
// writes (`dependencies:` then `- name=version` items).
struct CondaEnvironment {
  std::string file;
  int dependencies_line = 0;
  std::vector<std::pair<std::string, int>> conda_packages;  // name, line (python and pip left out)
  std::string python;                                       // "3.10"
  int pip_packages = 0;
  // The pip: section's own requirements (not its -r includes), by the
  // name pip gives them: name, line.
  std::vector<std::pair<std::string, int>> pip_requirements;
};

std::optional<CondaEnvironment> read_conda_environment(const std::filesystem::path& root);
// Whether a Pipfile's [packages] (a Pipfile.lock's "default") lists any.
bool pipenv_lists_packages(const std::filesystem::path& root, const std::string& file);

// ----- the entrypoint (detect_entrypoint.cpp) -----------------------------

// Which rule chose a Python project's command: one the project declares (a
// Procfile, its scripts, Django, a Ray Serve config, a Makefile target), or
// one gen inferred from the code (an app object a server runs, a script by
// its name, a package's __main__, notebooks).
enum class EntrypointRule { none, declared, server, script, package, notebooks };

// Reads one file (relative to root) for an app a server runs: a FastAPI or
// Flask app object, a Streamlit or Gradio script. True when it set py's
// command, port and environment.
bool app_served_by(const std::filesystem::path& root, const std::string& candidate,
                   PythonProject& py, std::vector<Evidence>& evidence);

// The kind of app a server command runs.
enum class ServerKind { none, fastapi, flask, streamlit, gradio };

// One Python file as a server's app: the kind it serves (none when it serves
// nothing, or is a Gradio module that launches nothing: a piece of a UI, a
// layout or a component, not a program), and the project as it is with that
// app as its command, with the evidence that says so.
struct ServedFile {
  ServerKind kind = ServerKind::none;
  PythonProject served;
  std::vector<Evidence> notes;
};

// A project's Python files, each read for the app it serves at most once:
// detection asks twice, the deep scan for the first server and the warning
// that names the others.
class ServedFiles {
 public:
  // py: the project before a command is chosen.
  ServedFiles(std::filesystem::path root, const PythonProject& py);
  const ServedFile& read(const std::filesystem::path& file);

 private:
  std::filesystem::path root_;
  PythonProject py_;
  std::map<std::string, ServedFile> files_;  // by path from the root
};

// The files where repositories put the app an image serves, in the order gen
// reads them: at the top (app/main.py, main.py, app.py, ...), then the same
// names inside the project's packages, flat or under src/.
std::vector<std::string> conventional_server_files(const std::filesystem::path& root);

// A Python file at a project's top that is a helper of packaging, tests or
// tooling (setup.py, conftest.py, invoke's tasks.py), never the program an
// image runs.
bool helper_script(const std::string& name);

// `if __name__ == "__main__":`, in either quoting: the file runs as a program.
bool has_main_guard(const std::string& text);

// True for a file inside a folder that is a project of its own (its own
// requirements, pyproject, setup.py or Dockerfile): another image's code.
bool in_nested_project(const std::filesystem::path& file, const std::filesystem::path& root);

// When gen inferred the command (EntrypointRule server or script), the other
// programs the project holds that could be the one it means: other servers,
// scripts at the top with a __main__ guard, C/C++/CUDA programs beside a
// Makefile or CMakeLists.txt. A warning names them, so that a wrong guess is
// never silent.
void warn_other_entrypoints(const std::filesystem::path& root, EntrypointRule rule,
                            PythonProject& py,
                            const std::vector<std::filesystem::path>& python_sources,
                            ServedFiles& served_files, std::vector<Evidence>& evidence);

// A project not installed whose code the command imports from src/: the
// image's PYTHONPATH gets src, said once, with why.
void import_from_src(PythonProject& py, const std::string& why, std::vector<Evidence>& evidence);

// The task queues (data/task-queues.json) whose app the project's code
// defines, each with the command that starts its worker: py.task_workers.
void find_task_workers(const std::filesystem::path& root, PythonProject& py,
                       const std::vector<std::filesystem::path>& python_sources,
                       std::vector<Evidence>& evidence);

// True when the project's requirements name the package.
bool depends_on(const PythonProject& py, const std::string& name);
// Sets py's command (and port, environment) from its scripts or its sources
// (`python_sources`: the project walk's).
void detect_entrypoint(const std::filesystem::path& root, PythonProject& py,
                       const std::vector<std::pair<std::string, std::string>>& scripts,
                       std::vector<Evidence>& evidence, bool has_dependencies,
                       const std::vector<std::filesystem::path>& python_sources);
// The X.Y .python-version names; "" without one.
std::string read_python_version_file(const std::filesystem::path& root);

// ----- cog.yaml (detect_cog.cpp) ------------------------------------------

// A Python project's cog.yaml: build.system_packages into the project's
// system packages (as apt.txt's), build.python_version as its Python where
// nothing else names one, and the predictor; what gen cannot use is said.
void read_cog_yaml(const std::filesystem::path& root, Project& p);

// ----- an entry script's command-line options (detect_script_options.cpp) --

struct ScriptOption {
  std::vector<std::string> flags;  // as written: "--port", "-p"
  std::string dest;                // the attribute its value is on: "server_name"
  std::string default_value;       // the default's source text ("9090", "'127.0.0.1'"), "" none
  std::string const_value;         // argparse's const= (with nargs="?"), "" none
  std::string action;              // "store_true", ... ("" none)
  std::string where;               // "file.py:12"
};
struct ScriptOptions {
  std::vector<ScriptOption> options;
  // The first server framework those files import (websockets, aiohttp,
  // gradio...) and where: "websockets (whisper_live/server.py:10)"; "" when
  // none does, and then a --port is as likely a database's or a service's
  // the script connects to.
  std::string server_import;
};
// The options the entry script (relative to root) declares with argparse's
// add_argument, click's @click.option or absl's flags.DEFINE_*, in it and in
// the project's own modules it imports, two imports deep: the script's own
// first, then in the order the imports are read.
ScriptOptions script_options(const std::filesystem::path& root, const std::string& entry);
// A call's text from its opening parenthesis (`lines[n][open]`) to the one
// that closes it, over 20 lines at most; a parenthesis in a string does not
// count.
std::string call_text(const std::vector<std::string>& lines, std::size_t n, std::size_t open);
// A call's top-level arguments, as written: `("--port", type=int,
// default=8)` -> {"\"--port\"", "type=int", "default=8"}.
std::vector<std::string> call_arguments(const std::string& call);

// ----- CMake's commands (cmake_lexer.cpp) ---------------------------------

// The text without its # comments (a # inside "quotes" stays).
std::string strip_cmake_comments(const std::string& text);

// One CMake command invocation: its lower-cased name and its arguments,
// split on whitespace ("quoted strings" kept whole, quotes removed).
struct CMakeCommand {
  std::string name;
  std::vector<std::string> args;
  int line = 0;  // where the command starts, for messages
};

std::vector<CMakeCommand> cmake_commands(const std::string& text);

// ----- CUDA C/C++ projects (detect_cuda_cpp.cpp) --------------------------

std::optional<CudaCppProject> detect_cuda_cpp(const std::filesystem::path& root, const Walk& walk,
                                              std::vector<Evidence>& evidence,
                                              BuildContext& build_context);

}  // namespace imgsmith::gen
