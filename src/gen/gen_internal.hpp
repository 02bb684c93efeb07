// What the gen library's files share and nothing outside it needs: the
// compatibility tables and small text helpers.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "imgsmith/gen/gen.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::gen {

// The embedded files (templates/*.mustache, data/*.json) by file name.
const std::map<std::string, std::string>& embedded_files();

struct TorchRelease {
  std::string torch;                // "2.6"
  std::vector<std::string> builds;  // CUDA X.Y of each wheel index
  std::string pypi;                 // the plain PyPI wheel's CUDA; "" if not recorded
};

struct CudaRelease {
  std::string cuda;  // "12.4.1"
  std::vector<std::string> os;
  std::string cudnn_tag;  // "cudnn", "cudnn8", "cudnn9"
  int cudnn_major = 9;    // the cuDNN its cudnn images carry
};

// A range of a framework's releases built for one CUDA and cuDNN
// (data/framework-cuda.json), with the page that says so.
struct FrameworkBuild {
  std::string package;                // PEP 503 name
  std::vector<std::string> releases;  // X.Y, oldest first
  std::string cuda;                   // "11.8", or a major "12"
  int cudnn = 0;                      // cuDNN major
  std::string source;                 // upstream page
  std::string note;
};

struct Flavour {
  double approx_bytes = 0;
  std::string size;
  std::string carries;
};

struct OsPackages {
  std::string python;  // the OS's own Python, "3.12"
  std::vector<std::string> python_runtime;
  std::vector<std::string> python_build;
  std::vector<std::string> cmake_build;
  std::vector<std::string> runtime_compiler;  // gcc and the Python headers, for Triton
  std::vector<std::string> vcs;               // git, for requirements from a VCS URL
};

struct FrameworkNeed {
  std::string need;  // none | bundled | system | system-cudnn
  std::string why;
  std::string size;                           // what it weighs installed, where known
  std::map<std::string, std::string> extras;  // extra -> need
  std::string cuda;  // the CUDA its build expects ("11.8", or a major "12"); "" any
  std::map<std::string, std::string> extra_cuda;  // extra -> cuda
  std::string shared_memory;  // why it needs a larger /dev/shm; "" when it does not
  std::string
      runtime_compiler;  // why it compiles code when the app runs (Triton); "" when it does not
  // The torch each range of its releases pins: {first release, torch}, oldest first.
  std::vector<std::pair<std::string, std::string>> torch_pins;
  std::string torch_pins_source;
};

// One row of data/python-packages.json: what gen knows of a distribution
// beyond the frameworks table, with the primary source that says so.
struct PackageFact {
  std::string need;  // none | bundled | system | system-cudnn | unknown
  std::string why;
  std::map<std::string, std::string> extras;  // extra -> need
  std::string cuda;                           // the CUDA its wheels are built for, where known
  std::vector<std::string> apt;               // run-time Debian packages its wheels do not bundle
  std::vector<std::string> build_apt;         // what a source build needs in the builder
  std::vector<std::string> writes;            // directories it writes where the app runs
  std::string gpu_note;                       // how it uses a GPU when the plain install does not
  std::string source;
};

// A shared library's providing package on each OS gen builds on
// ("debian" for the CPU image, "ubuntu22.04", "ubuntu24.04").
using SonamePackages = std::map<std::string, std::string>;

// A range of a package's releases with the CPython versions it has
// wheels for (data/python-wheels.json).
struct WheelPythons {
  std::vector<std::string> releases;  // "2.1" (a series) or "0.4.14-0.4.16" (a range)
  std::vector<std::string> python;    // "3.10", ...
  std::string source;
};

// One row of data/servers.json: how a server program picks the address and
// port it listens on, from its own docs or source.
struct ServerFact {
  std::string name;
  std::vector<std::string> programs;  // argv[0] names that run it
  std::vector<std::string> modules;   // `python -m` modules that run it
  std::string subcommand;             // a word its args must hold ("run"), "" none
  std::string script;                 // `python SCRIPT`: the script's name, "" none
  std::vector<std::string> markers;   // top-level paths of the project it belongs to
  std::string default_host;           // as it binds with no argument
  int default_port = 0;
  std::vector<std::string> port_flags, host_flags, bind_flags;
  bool positional_addrport = false;       // `runserver [ADDR:]PORT`
  std::string bare_listen_flag;           // a flag that alone means every interface
  std::vector<std::string> config_flags;  // flags naming a config file that may set either
  std::vector<std::string> config_files;  // files it reads from the working directory
  std::string env_host, env_port;         // environment variables it reads
  std::string env_port_host;              // the address it binds when env_port sets the port
  std::vector<std::string> listen_all;    // the arguments that make it listen on every interface
  std::string listen_all_env;             // or the KEY=VALUE that does
  std::string listen_all_hint;            // or how, in words (a config file's line)
  std::string source;
};

// One row of data/task-queues.json: a task queue whose jobs run only in a
// worker process that the queue's own program starts.
struct TaskQueueFact {
  std::string name;                 // "Celery"
  std::string package;              // the requirement that brings it
  std::string service;              // its process in compose.yaml and k8s/: "celery-worker"
  std::string what;                 // why the process must run, in words
  std::string app_of;               // a second process of this row's app ("Celery"), "" none
  std::regex pattern;               // a line that defines its app; group 1 names the object
  std::vector<std::string> worker;  // the worker's command: {module}, {object}, {modules}
  // With {object}: a line that defines a job, and a line of the app's module
  // that makes the worker import the jobs; "" for a queue without the need.
  std::string tasks, registers;
  // Queues: each match of `queues` (its first group that matched) in the
  // project's code names a queue jobs are sent to; a worker consumes
  // `default_queue` alone unless told, so when the code names another the
  // worker's command gets `queue_args` ({queue}: one word a queue,
  // {queues}: the names joined by commas). A line matching `queues_unless`
  // (the app lists its queues, which its workers consume) leaves it as it is.
  std::optional<std::regex> queues, queues_unless;
  std::string default_queue;
  std::vector<std::string> queue_args;
  std::string source;
};

// text with every `key` ("{object}") replaced by value: the placeholders of
// data/task-queues.json's commands and patterns.
std::string fill_placeholder(std::string text, const std::string& key, const std::string& value);

struct NamePattern {
  std::string prefix, suffix, need, why, cuda;
};

struct Tables {
  std::string torch_index_url;
  std::vector<TorchRelease> torch;
  std::map<int, int> minimum_driver;  // CUDA major -> driver (minor-version compatibility)
  std::map<std::string, int>
      require_cuda_driver;  // X.Y -> first driver supporting it (NVIDIA_REQUIRE_CUDA)
  std::string require_cuda_source;
  std::vector<FrameworkBuild> framework_builds;
  std::string repository;    // nvidia/cuda
  std::string default_cuda;  // X.Y
  std::vector<std::string> os_preference;
  std::vector<CudaRelease> releases;
  std::map<std::string, Flavour> flavours;
  Flavour cudnn_extra;
  std::map<std::string, std::vector<std::string>> cuda_architectures;  // major -> sm list
  std::map<std::string, std::string> architecture_first_cuda;          // "120" -> "12.8"
  std::map<std::string, OsPackages> os;
  std::vector<std::string> known_python;
  std::string preferred_python;
  std::string cpu_image;  // with {version}
  std::string uv_image;
  std::vector<std::string> poetry;
  std::vector<std::string> cpu_runtime_compiler;  // gcc on the CPU image (its Python has headers)
  std::vector<std::string> cpu_vcs;               // git on the CPU image's builder
  std::string runtime_compiler_size;
  std::map<std::string, FrameworkNeed> frameworks;
  std::vector<NamePattern> patterns;
  std::map<std::string, std::vector<WheelPythons>> wheel_pythons;  // data/python-wheels.json
  std::map<std::string, PackageFact> packages;                     // data/python-packages.json
  std::map<std::string, SonamePackages> sonames;                   // data/soname-packages.json
  std::map<std::string, SonamePackages> programs;  // program the code runs -> its package, by OS
  // A package an OS no longer has (a transitional one removed) -> that OS
  // -> what installs the same files there (data/soname-packages.json "removed").
  std::map<std::string, std::map<std::string, std::vector<std::string>>> removed_packages;
  std::vector<ServerFact> servers;           // data/servers.json
  std::vector<TaskQueueFact> task_queues;    // data/task-queues.json
  std::set<std::string> stdlib_modules;      // data/python-stdlib.json
  std::vector<std::string> driver_injected;  // sonames the container toolkit mounts
  std::map<std::string, std::set<std::string>> sonames_in_base;  // OS -> sonames its base carries
  std::map<std::string, std::string> header_libraries;           // CUDA header -> library it links
  std::set<std::string> dev_requirement_words;                   // requirements-dev.txt, -test...
  std::set<std::string> conda_from_image;  // conda packages the CUDA image provides
};

const Tables& builtin_tables();

// The docker build context as detection sees it (build_context.cpp): where
// the project sits in it, and the paths the project names outside its own
// directory (-r ../../shared/x.txt, -e ../../libs/common). COPY reaches only
// what is inside the context: such a path is recorded, to be copied, when the
// context (--context) holds it, and refused otherwise, naming the line and
// the --context that would hold it.
class BuildContext {
 public:
  // `context` is --context, empty for the project directory itself. Throws
  // InputError, naming both, when it is neither the project directory nor
  // above it. What reach() finds is explained in `evidence`.
  BuildContext(const std::filesystem::path& project, const std::filesystem::path& context,
               std::vector<Evidence>& evidence);

  const std::filesystem::path& canonical() const { return canonical_; }  // the context's real path
  // The context as given (the project directory without --context), for messages.
  const std::filesystem::path& shown() const { return context_; }
  // The project directory within the context ("services/api"); "" when the
  // context is the project directory.
  const std::string& project_path() const { return project_path_; }
  std::vector<OutsidePath> outside_paths() const;  // sorted by path

  struct Reached {
    std::string path;  // relative to the project ("../../shared/x.txt" when outside it)
    bool in_project = true;
  };

  // `named`, a relative path as the project writes it, from the directory
  // `from` (relative to the project). `where` is the file:line naming it
  // ("requirements.txt:1"), `at` the same with the file's path, for messages,
  // and `what` how it is named there ("-r ../shared.txt").
  Reached reach(const std::string& from, const std::string& named, const std::string& where,
                const std::string& at, const std::string& what);

 private:
  std::string holding_both(const std::string& rel) const;
  void record(const OutsidePath& path);

  std::filesystem::path project_;
  std::filesystem::path context_;  // as given, for messages
  std::filesystem::path canonical_;
  std::string project_path_;
  std::vector<OutsidePath> outside_;
  std::vector<Evidence>& evidence_;
};

// Version helpers (python_deps.cpp).
std::string major_minor(const std::string& version_text);  // "2.6.0+cu124" -> "2.6"
std::string lower_bound_release(const std::string& specifier);
// PEP 440 release order of two version strings ("12.10" after "12.8").
bool version_less(const std::string& a, const std::string& b);
// True when the one release `version` ("0.4.15") satisfies every clause of
// a PEP 440 specifier (python_satisfies asks the same of any X.Y.Z).
bool release_satisfies(const std::string& version, const std::string& specifier);
// Poetry's "^1.2" and "~1.2" as PEP 440 ranges pip understands.
std::string poetry_to_pep440(const std::string& specifier);
std::string local_label(const std::string& specifier);  // "==2.6.0+cu124" -> "cu124"
// One exact version: "==2.6.0", not "==2.6.*,>=2.6.1" or a range.
bool exact_pin(const std::string& specifier);

}  // namespace imgsmith::gen
