// gen's decisions as functions: typed facts in, a typed result that carries
// its reasons out. Each is testable alone and knows nothing of the Plan;
// Decider::make() calls them in one visible order and applies what they
// return. The Dockerfile's spelling of a result stays in templates/.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gen_internal.hpp"
#include "imgsmith/gen/gen.hpp"

namespace imgsmith::gen {

// ----- what each requirement needs from the GPU image (decide_packages.cpp)

// How gen knows what a package needs. Unknown is an answer of its own: a
// package no table names is never taken for a CPU package.
enum class Basis {
  Framework,  // data/python-frameworks.json
  Table,      // data/python-packages.json
  Pattern,    // a name pattern (nvidia-*-cu12)
  Told,       // imgsmith.toml [gen] packages
  NameHint,   // unknown, but its name speaks of CUDA or a GPU
  Unknown,
};
const char* basis_name(Basis basis);

struct PackageVerdict {
  std::string name;    // PEP 503
  std::string source;  // where the project names it: "requirements.txt:3"
  Basis basis = Basis::Unknown;
  std::string need;  // none | bundled | system | system-cudnn; "" when gen cannot tell
  std::string why;
  std::string cuda;         // the CUDA its build expects ("11.8", a major "12"); "" any
  std::string citation;     // the table row's source, the policy file, the pattern
  bool from_extra = false;  // an extra, not the package itself, decided the need
  // An extra no table knows whose name speaks of CUDA ("cuda12x"): what it
  // brings is unknown even when the package is known.
  std::string unknown_extra;
  bool from_lock = false;             // named by a lock file, which lists every package
  const PackageFact* fact = nullptr;  // the table row, when there is one
};

// What the user told gen of packages it does not know: name -> need.
struct ToldNeeds {
  std::map<std::string, std::string> need;
  std::string source;  // "imgsmith.toml [gen] packages"
};

// One verdict per requirement, in the order given. `lock` is the lock file
// the requirements come from, "" when none.
std::vector<PackageVerdict> classify_packages(const std::vector<Requirement>& requirements,
                                              const Tables& tables, const ToldNeeds& told,
                                              const std::string& lock);

// The packages gen could not classify that a user must hear about: every
// unknown one the project names itself, and those of a lock whose names
// speak of a GPU (a lock lists hundreds of plain dependencies).
std::vector<const PackageVerdict*> unknown_packages(const std::vector<PackageVerdict>& verdicts);

// ----- system libraries the wheels need (decide_packages.cpp) ---------------

struct AptNeed {
  std::string package;  // as apt installs it on the final image's OS
  std::string why;      // "opencv-python (requirements.txt:2) links libGL"
};

struct SystemLibraries {
  std::vector<AptNeed> final_stage;
  std::vector<AptNeed> builder;
};

// `os` is the final image's OS as the tables name it: "debian" for the CPU
// image, "ubuntu22.04", "ubuntu24.04". Debian's names are rewritten where
// that OS renamed the package (Ubuntu 24.04's t64 libraries).
SystemLibraries system_libraries(const std::vector<PackageVerdict>& verdicts, const Tables& tables,
                                 const std::string& os);
std::string package_on(const std::string& debian_name, const Tables& tables, const std::string& os);

// ----- paths the app writes under its own code (decide_writable.cpp) --------

struct WritablePath {
  std::string path;  // relative to the project: "outputs", "db.sqlite3"
  bool directory = true;
  std::string why;     // "os.makedirs(\"outputs\")", "Django's SQLite database"
  std::string source;  // "app.py:12", "imgsmith.toml [gen] writable"
};

// Directories the app creates or writes beside its code, found in the
// code (os.makedirs, Path.mkdir, Django's settings) and from what its
// packages are known to write, plus what the user lists ([gen] writable).
std::vector<WritablePath> writable_paths(const Project& project,
                                         const std::vector<PackageVerdict>& verdicts,
                                         const std::vector<std::string>& told,
                                         const std::string& told_source);

// ----- the image checks itself at build time (decide_image_checks.cpp) ------

struct ImageCheck {
  bool enabled = false;
  std::string why;
  // Directories whose shared libraries must resolve in the final stage.
  std::vector<std::string> library_roots;
  // Libraries allowed missing: the driver's, mounted at run time.
  std::vector<std::string> allowed_missing;
  // soname -> the package that provides it on the final image's OS.
  std::vector<std::pair<std::string, std::string>> soname_packages;
  // Python: the files the command starts from, relative to the app's
  // directory, whose imports (and their local imports') must import.
  std::vector<std::string> entry_files;
  std::vector<std::string> entry_modules;
};

// `verify` is false for --no-verify.
ImageCheck image_check(const Plan& plan, bool verify, const Tables& tables);

// ----- what stays out of the build context (decide_context.cpp) -------------

struct ContextHygiene {
  // .dockerignore patterns from .gitignore, relative to the build context
  // (prefix: the project's path in it, "" or "services/api/").
  std::vector<std::string> from_git;
  std::vector<std::string> secrets;  // files holding secrets, by path
  std::vector<std::string> warnings;
  std::vector<Evidence> reasons;
};

// Git's ignore patterns translated to Docker's (a name without a slash
// matches at any depth in git, only at the top in Docker), the files that
// hold secrets by content, and Git LFS pointers that would ship in place
// of the files they point to.
ContextHygiene context_hygiene(const Project& project, const std::string& prefix);

// One .gitignore line as .dockerignore patterns; none for a blank line or
// a comment.
std::vector<std::string> docker_patterns(const std::string& gitignore_line,
                                         const std::string& prefix);

// ----- the Pythons the project's wheels exist for (decide_python.cpp) -------

struct PythonFromWheels {
  bool constrained = false;       // some requirement's table rows narrowed it
  std::set<std::string> allowed;  // X.Y that every such requirement has wheels for
  std::vector<Evidence> reasons;
};

// What data/python-wheels.json says of each requirement: pip takes the
// newest release with a wheel for the interpreter, so a Python is possible
// when some release the specifier allows has a wheel for it.
PythonFromWheels python_from_wheels(const std::vector<Requirement>& requirements,
                                    const Tables& tables);

// ----- where a server listens (decide_server.cpp) --------------------------

struct ServerListen {
  const ServerFact* server = nullptr;  // the table's row; nullptr: no server gen knows
  // With no server: a row that names the program but serves only with a
  // subcommand the command lacks (`interpreter` and `--server`).
  const ServerFact* without_subcommand = nullptr;
  int port = 0;           // 0: cannot tell
  std::string port_from;  // "--port 9000", "uvicorn's default"
  std::string host;       // the address it binds, "" when it cannot tell
  std::string host_from;
  bool host_by_argument = false;  // an argument of the command set the address
  bool config = false;            // a config file it reads may set either
  bool shell = false;             // a shell reads the command (sh -c "...")
  // A $VARIABLE where the port goes in an exec-form command: Docker passes
  // it to the server as written.
  bool unexpanded_port = false;
  // It binds the loopback address only, which no port mapping reaches.
  bool loopback_only = false;
  std::vector<std::string> fix;  // the arguments that make it listen on every interface
  std::string fix_env;           // or the KEY=VALUE that does
};

// Reads a container command (as detected, or --cmd) against
// data/servers.json: which server it runs, on which port and address, from
// its arguments, `env` (KEY=VALUE as the image sets it) or the server's
// defaults. `top_level` names the project's top-level files and folders,
// for servers that are a project's own script (ComfyUI's main.py). A shell
// line (`sh -c "exec uvicorn ..."`) is read when it is one plain command.
// `configured_host` is the address the project's own config gives the
// server (Ray Serve's http_options), "" when none does; an argument still
// comes first.
ServerListen server_listen(const std::vector<std::string>& cmd, const std::vector<std::string>& env,
                           const Tables& tables, const std::set<std::string>& top_level,
                           const std::string& configured_host = "");

// ----- the GPUs the image must run on (decide_gpus.cpp)

// --gpu H100,L4: the SM architectures the project's own CUDA code is built
// for, and what the image's CUDA release lacks.
struct TargetArchitectures {
  std::vector<std::string> archs;  // "89", "90": ascending, one per compute capability
  std::vector<std::string> gpus;   // the names as data/gpus.json spells them
  // Each target the release has no compiler for, and the release that has
  // ("RTX-5090 (sm_120, first built by CUDA 12.8)"); empty when every one is.
  std::vector<std::string> missing;
  std::string needed_cuda;  // the oldest release that builds them all
};
// Throws InputError for a GPU data/gpus.json does not know.
TargetArchitectures target_architectures(const std::vector<std::string>& gpus,
                                         const std::string& cuda, const Tables& tables);

}  // namespace imgsmith::gen
