// imgsmith gen: detect what a project needs, decide the smallest image that
// runs it, and render a multi-stage Dockerfile from the templates.
//
// Three steps, each testable alone:
//   detect_project()  reads the project directory into a Project;
//   make_plan()       turns a Project and the user's options into a Plan,
//                     using the compatibility tables (data/*.json);
//   render_plan()     fills the mustache templates (templates/*.mustache).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "imgsmith/models/vram.hpp"

namespace imgsmith::gen {

// One thing detection found or decided, with where it came from, for
// `--explain` ("requirements.txt:3").
struct Evidence {
  std::string source;
  std::string text;
};

// One dependency as written (PEP 508), its name normalised (PEP 503).
struct Requirement {
  std::string name;
  std::vector<std::string> extras;
  std::string specifier;  // ">=2.6,<2.7", "==2.6.0+cu124", "" when unpinned
  std::string text;       // as written, markers included; what pip is given
  std::string source;     // file:line
};

struct PythonProject {
  std::vector<Requirement> requirements;
  // requirements*.txt files pip installs (-r), relative to the project, and
  // every file the build context needs for them: those plus their includes.
  std::vector<std::string> install_files;
  std::vector<std::string> requirement_files;
  std::string lock;                       // "uv.lock", "poetry.lock" or ""
  bool installable = false;               // pyproject has a [build-system] (or is Poetry's)
  std::string distribution;               // its own name ([project] or Poetry's), normalised
  bool requirements_need_source = false;  // "-e ." or a local path in requirements
  // The project's own paths the requirements install from ("dist/x.whl",
  // "libs/common"), relative to it; "." (the project itself) left out.
  std::vector<std::string> local_install_paths;
  // pyproject.toml's own dependencies ([project] or Poetry's), read even
  // when requirements files install the rest: `pip install .` brings them.
  std::vector<Requirement> project_dependencies;
  // The requirements install the project itself ("-e .", ".[gpu]"), with
  // these extras: pip then resolves its pyproject.toml dependencies too.
  bool requirements_install_project = false;
  std::vector<std::string> requirements_project_extras;
  // What -c constraint files pin, by name: they install nothing themselves
  // but decide the version of a requirement named elsewhere.
  std::map<std::string, Requirement> constraints;
  std::vector<std::string> constraint_files;  // relative to the project, as pip is given them
  // The project is installed with its dependencies after the requirements
  // (plain `pip install .`): some of them are only in pyproject.toml.
  // The requirements are setup.py's install_requires, read to classify
  // them: `pip install .` installs them with the project, as setup.py says
  // (gen's reading of a Python expression may be partial).
  bool requirements_from_setup_py = false;
  bool project_brings_dependencies = false;
  // Where a requirement is installed from a VCS URL ("git+https://..."),
  // which pip clones with git: file:line, "" when none is.
  std::string vcs_source;
  std::vector<std::string> index_options;  // --index-url/--extra-index-url lines seen
  // Indexes pyproject.toml names ([[tool.uv.index]], [[tool.poetry.source]]),
  // as pip options: pip must be given them when no lock file installs.
  std::vector<std::string> pyproject_indexes;
  std::string python_constraint;  // ">=3.10", "==3.11.*"
  std::string python_constraint_source;
  std::vector<std::string> cmd;  // the detected entrypoint, JSON-form words
  std::string cmd_source;
  // The Cog predictor cog.yaml names ("predict.py:Predictor") and where;
  // "" without one. Only Cog's HTTP server runs it.
  std::string cog_predictor;
  std::string cog_source;
  int port = 0;               // the port a web server listens on
  bool port_guessed = false;  // a Procfile web process that names no $PORT: 8000 assumed
  bool port_said = false;     // a detection warning already says the port is unknown or chosen
  // Modules the code imports that no dependency file names, when the
  // project declares no dependency at all: "gradio (server.py:3)".
  std::vector<std::string> undeclared_imports;
  // Programs the code runs that a package of the OS ships (data/
  // soname-packages.json "programs"), with where: {"ffmpeg", "audio.py:12"}.
  std::vector<std::pair<std::string, std::string>> programs_run;
  // The address the project's own config gives its server (Ray Serve's
  // http_options host); "" when none does.
  std::string server_host;
  std::vector<std::string> env;  // KEY=VALUE the entrypoint needs (GRADIO_SERVER_NAME=0.0.0.0)
  // Task queues whose app the code defines (a Celery app, Dramatiq actors):
  // their jobs run only in a worker process, which this command starts.
  struct TaskWorker {
    std::string queue;             // "Celery"
    std::string service;           // "celery-worker"
    std::string what;              // why it must run: "jobs queued with Celery run only in ..."
    std::vector<std::string> cmd;  // celery -A tasks:app worker --loglevel=INFO
    std::string where;             // "tasks.py:3"
    std::string source;            // the queue's docs for the command
    bool unnamed = false;          // the app is made in a function: cmd names no module for it
    std::string caveat;            // what the command cannot do alone, "" when nothing
  };
  std::vector<TaskWorker> task_workers;
  // A torch CUDA extension (torch.utils.cpp_extension / CUDAExtension in
  // setup.py or pyproject.toml): built against the installed torch on devel.
  // [project.optional-dependencies]: extra name -> its requirements
  std::map<std::string, std::vector<Requirement>> optional_dependencies;
  // Dependencies pyproject.toml installs from a directory outside the project
  // ([tool.uv.sources] path, Poetry's path): name -> that directory, relative
  // to the project ("../../libs/common"). pip reads neither table, so it is
  // given the directory.
  std::map<std::string, std::string> outside_path_sources;
  bool cuda_extension = false;
  std::string cuda_extension_source;  // file:line
};

struct CudaCppProject {
  bool cmake = false;                  // CMakeLists.txt with CUDA (else plain nvcc)
  std::vector<std::string> targets;    // add_executable names (cmake), or the one binary
  std::vector<std::string> cuda_libs;  // CUDA::cublas..., or -lcublas from #includes
  std::vector<std::string> sources;    // *.cu / *.cpp for plain nvcc, sorted
  bool cmake_install = false;          // the CMakeLists has install() rules
  bool sets_architectures = false;     // the project chooses its own CUDA archs
  std::string min_cuda;                // find_package(CUDAToolkit X.Y)
  std::string min_cuda_source;         // CMakeLists.txt:N
  std::string min_cmake;               // cmake_minimum_required(VERSION X.Y[...Z])
  std::string min_cmake_source;        // CMakeLists.txt:N
};

// A file or directory outside the project directory that the build reads:
// an -r include in ../../shared, a local path dependency in ../../libs/common,
// a CMake add_subdirectory(../../libs/kernels). Only a build context above
// the project (--context) holds it; the Dockerfile copies it to the same place
// relative to the project, so the project's relative paths resolve there too.
struct OutsidePath {
  std::string path;  // relative to the build context: "shared/requirements.txt"
  bool directory = false;
  std::string source;  // where the project names it: "requirements.txt:1"
};

struct Project {
  std::filesystem::path dir;
  std::string name;  // the directory's name, made a valid image name
  // The docker build context (--context): the project directory or one of
  // its ancestors. context_path is the project directory within it
  // ("services/api"), "" when the context is the project directory itself,
  // and every output is then what it is without --context.
  std::filesystem::path context;  // absolute, canonical
  std::string context_path;
  std::vector<OutsidePath>
      outside_paths;  // sorted by path; none without a context above the project
  std::optional<PythonProject> python;
  std::optional<CudaCppProject> cuda_cpp;
  bool has_cuda_sources = false;  // *.cu anywhere (a Python project's extension, too)
  // The project's Python files, relative to it, shallowest first; tests,
  // examples and skipped directories (venvs, build trees) left out.
  std::vector<std::string> python_sources;
  // Files that must never reach an image, found by their content: path
  // relative to the project -> what they hold ("a private key").
  std::vector<Evidence> secret_files;
  // Git LFS pointer files: the checkout holds the pointer, not the file.
  std::vector<std::string> lfs_pointers;
  // The project's .gitignore patterns, as written, in order.
  std::vector<std::string> gitignore;
  // Debian packages the project declares outside pip: apt.txt, one per line
  // as repo2docker reads it. {source "apt.txt:3", text "ffmpeg"}.
  std::vector<Evidence> system_packages;
  std::vector<Evidence> evidence;
  // The model files in the project (and those --model names), read
  // header-only, with the GPU memory each needs (detect_models).
  std::vector<ModelReport> models;
};

// Reads the project at `dir`. Throws InputError when it cannot be read, when
// nothing in it is recognisable (the message lists what was looked for), or
// when an input would make a wrong image (a broken requirements line, a
// conda environment, ...): the message names the file and line.
// `requirements` (--requirements) names the requirements file to install,
// relative to `dir`; empty lets gen choose. `context` (--context) is the
// docker build context, `dir` or a directory above it (empty: `dir`); files
// the project names outside `dir` are allowed when they are inside it, and
// refused (InputError naming the file and line) when they are not.
Project detect_project(const std::filesystem::path& dir, const std::string& requirements = {},
                       const std::filesystem::path& context = {});

// What the user asked for on the command line; empty means "decide".
struct Options {
  std::string flavor = "auto";  // auto | base | runtime | devel
  std::string cuda;             // X.Y or X.Y.Z
  std::string os;               // ubuntu22.04 | ubuntu24.04
  std::string python;           // 3.X
  bool cudnn = false;
  std::string registry_mirror;  // replaces the registry of every base image
  std::string base;             // the final stage's image instead of NVIDIA's
  std::string wheelhouse;       // a directory of wheels in the project: install offline from it
  std::string index_url;        // pip's --index-url (a private or mirrored index)
  bool probe = true;
  // The probe image the Dockerfile copies the probe from by default
  // (IMGSMITH_PROBE_IMAGE's default); "" for the build context's
  // .imgsmith/imgsmith-probe-ARCH.
  std::string probe_image;
  bool compose = false;
  // --k8s: Kubernetes manifests in k8s/ (a Deployment and Service for a
  // server, a Job otherwise), asking for `gpus` of `gpu_resource`.
  bool k8s = false;
  int gpus = 1;
  std::string gpu_resource = "nvidia.com/gpu";
  // --k8s-validator: a DaemonSet running the image's probe (--bench --json)
  // once on every GPU node, for `imgsmith probe --summarize`.
  bool k8s_validator = false;
  bool syntax = false;           // emit "# syntax=docker/dockerfile:1"
  std::vector<std::string> cmd;  // --cmd, split into words
  int port = 0;                  // --port: the port the app listens on; 0 keeps the detected one
  bool runtime_compiler = true;  // false: --no-runtime-compiler, no gcc/Python headers for Triton
  // From imgsmith.toml's [gen] table (source names the file, for messages):
  std::vector<std::string> system_packages;  // Debian packages, as apt.txt lists them
  std::vector<std::string> extras;           // optional dependency groups of the project to install
  std::string policy_source;                 // "imgsmith.toml [gen]"
  // [gen] packages: what a package gen does not know needs from the GPU
  // image, name (PEP 503) -> none | bundled | system | system-cudnn.
  std::map<std::string, std::string> packages;
  // [gen] writable: paths under the project the app writes at run time.
  std::vector<std::string> writable;
  // false for --no-verify: the image does not check itself at build time.
  bool verify = true;
  // --model: model files or folders to read besides the project's own (a
  // model mounted at run time, or stored elsewhere).
  std::vector<std::string> models;
  // --gpu H100,L4 (or [gen] gpus): the GPUs the image must run on, as
  // data/gpus.json names them: the project's own CUDA code is compiled for
  // them alone, and a CUDA release without kernels for one is refused.
  std::vector<std::string> target_gpus;
};

// Everything the templates need, decided. Strings are rendered as they are.
struct Plan {
  std::string project_name;
  std::string kind;           // "python-cpu", "python-gpu", "cuda-cpp"
  std::string template_name;  // base | runtime | devel | cpu-python
  std::string flavor;         // base | runtime | devel; "" for CPU images
  bool cudnn = false;
  bool gpu = false;
  std::string cuda;  // full release, "12.4.1"; "" for CPU images
  std::string os;    // ubuntu24.04; "" for CPU images
  std::string final_image;
  std::string builder_image;
  std::string uv_image;         // "" when uv is not used
  std::string python;           // 3.X; "" for C++ projects
  bool managed_python = false;  // uv-managed Python, copied into the final stage
  std::vector<std::string> builder_apt;
  std::vector<std::string> final_apt;
  bool probe = false;
  std::string probe_image;  // "" for the build context's (Options::probe_image)
  bool nvidia_env = false;
  std::vector<std::string> cmd;
  int port = 0;
  std::vector<std::string> env;  // KEY=VALUE set in the final stage for the entrypoint
  // Processes the same image runs beside its command: a task queue's worker
  // (compose.yaml's second service).
  struct Worker {
    std::string service;  // "celery-worker"
    std::string what;     // why it must run, in words
    std::vector<std::string> cmd;
    std::string source;
  };
  std::vector<Worker> workers;
  std::vector<ModelReport> models;
  // The largest model's need at its stored precision (IMGSMITH_MODEL_VRAM,
  // which the probe checks against the GPU's free memory); 0: no model.
  std::uint64_t model_vram = 0;
  std::string shm_size;  // docker run --shm-size ("8g"); "" keeps Docker's 64 MB
  int min_driver = 0;
  // Why the driver must be that new, when it is not the image's own
  // NVIDIA_REQUIRE_CUDA (torch's wheels of a newer CUDA beside it).
  std::string min_driver_why;
  std::string size_class;
  std::vector<std::string> why_base;  // the chosen base and why, in sentences
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // what a choice costs, printed as "note:"
  std::vector<std::string>
      declared_apt;               // the project's own apt packages (apt.txt, [gen]), as written
  bool runtime_compiler = false;  // gcc and the Python headers in the final stage (Triton)
  std::vector<std::string>
      cleanup_paths;  // builder-only paths removed from /app before the final stage copies it
  std::string
      torch_cuda_arch_list;       // TORCH_CUDA_ARCH_LIST for a CUDA extension build; "" when none
  std::vector<Evidence> explain;  // detection evidence, then decisions
  // Requirements gen could not classify, "name (file:line)": it warns,
  // and never takes them for CPU packages in what it says.
  std::vector<std::string> unknown_packages;
  // Directories under the app's directory the app writes, made its own
  // (absolute, in the image), and emptyDir volumes in the k8s manifests.
  std::vector<std::string> writable_dirs;
  // .dockerignore lines from the project's .gitignore (what git leaves out
  // stays out of the build context), and files found to hold secrets.
  std::vector<std::string> ignore_from_git;
  std::vector<std::string> ignore_secrets;
  // The build-time check of the final stage (decisions.hpp's ImageCheck).
  bool verify = false;
  std::vector<std::string> verify_roots;
  std::vector<std::string> verify_allowed;                           // sonames allowed missing
  std::vector<std::pair<std::string, std::string>> verify_packages;  // soname -> package
  std::vector<std::string> verify_entry_files;                       // relative to app_dir
  std::vector<std::string> verify_entry_modules;
  // Python install details
  std::string install_mode;                        // requirements | pyproject | uv | poetry
  std::vector<std::string> requirement_files;      // copied before the install
  std::vector<std::string> requirement_files_top;  // given to pip with -r
  // Paths in the project that the requirements install from ("dist/x.whl",
  // "libs/common"): kept in the build context whatever .dockerignore says.
  std::vector<std::string> local_install_paths;
  std::vector<std::string> pyproject_deps;  // PEP 508 strings, for pyproject mode
  std::vector<std::string> pip_index_args;  // e.g. --extra-index-url URL
  std::string wheelhouse;                   // copied in before the install
  bool install_project = false;
  bool source_before_deps = false;
  std::string project_install_args;  // "--no-deps ." or "." (pip install ...)
  std::string venv_command;          // creates /opt/venv (or /opt/poetry)
  std::string uv_python;             // what uv is told to use
  std::vector<std::string> poetry_packages;
  // C++ build details
  bool cmake = false;
  bool cmake_install = false;
  std::vector<std::string> targets;
  std::string cuda_architectures;  // CMake form "75-real;...;90"; "" when the project sets its own
  std::string
      cmake_from_pypi;  // X.Y: the builder's OS has an older CMake, so uv installs this series
  std::string nvcc_arch_flags;  // -gencode ... for plain nvcc
  std::vector<std::string> nvcc_sources;
  std::vector<std::string> nvcc_libs;
  bool syntax = false;
  bool compose = false;
  bool k8s = false;
  bool k8s_validator = false;
  int k8s_gpus = 1;
  std::string gpu_resource = "nvidia.com/gpu";
  // --context above the project: COPY sources are relative to the context,
  // and the context's layout is kept in the image, so that what the project
  // names outside its directory is where its relative paths lead.
  std::string context_path;  // the project within the context: "services/api"; "" without one
  std::string context_up;    // the context from the project directory: "../.."
  std::filesystem::path
      context_dir;  // absolute, for the build command printed from wherever gen ran
  std::vector<std::string>
      outside_paths;  // copied from outside the project, context-relative; directories end in '/'
  std::string app_dir =
      "/app";  // the project's code in the image: /app, or /app/services/api with a context
};

// Throws InputError for a request that cannot be met (a CUDA release with no
// image, cuDNN on the base flavour, ...), naming the option and the choices.
Plan make_plan(const Project& project, const Options& options);

struct Rendered {
  std::string dockerfile;
  std::string dockerignore;
  // Where the ignore file goes, beside the Dockerfile: .dockerignore, which
  // Docker reads at the context's root; Dockerfile.dockerignore with a context
  // above the project, which BuildKit reads in its place and which leaves the
  // context's own .dockerignore alone.
  std::string dockerignore_name = ".dockerignore";
  std::string compose;  // "" unless the plan asks for it
  // With --k8s: k8s/<file>, in the order to apply them.
  std::vector<std::pair<std::string, std::string>> k8s;
  // The final stage's build-time check, relative to the project:
  // .imgsmith/check/libraries.sh (and imports.py for a Python app).
  std::vector<std::pair<std::string, std::string>> check_files;
};

Rendered render_plan(const Plan& plan);

// The model files under `dir` (weights of 1 MB or more judged by their
// content, ONNX graphs, config.json beside them) and in `paths` (files or
// folders, --model), read header-only, with their VRAM estimates. Throws
// InputError naming a --model path that cannot be read.
std::vector<ModelReport> detect_models(const std::filesystem::path& dir,
                                       const std::vector<std::string>& paths);

// The summary `gen` prints: base and why, size class, driver, commands.
std::string summary(const Plan& plan);

// The templates, by file name, as embedded at build time.
const std::map<std::string, std::string>& builtin_templates();

// Splits a --cmd string into words the way a POSIX shell would for plain
// words and quotes (no expansion). Throws InputError on an open quote.
std::vector<std::string> split_command(const std::string& text);
// ["a", "b c"]: the words as the JSON array of an exec-form CMD, control
// characters escaped. Throws InputError on a word that is not valid UTF-8.
std::string command_json(const std::vector<std::string>& words);

// PEP 503: lowercase, runs of -_. become one '-'.
std::string normalise_name(const std::string& name);

// Parses one PEP 508 requirement ("torch[extra]==2.6 ; python_version>'3'").
// Returns nothing for lines that are not requirements.
std::optional<Requirement> parse_requirement(const std::string& text, const std::string& source);

// True when version "X.Y" satisfies every clause of a PEP 440 specifier set
// (or Poetry's ^ and ~ forms) for some patch release.
bool python_satisfies(const std::string& version, const std::string& specifier);

}  // namespace imgsmith::gen
