// The plan's install steps for a Python project: how its dependencies and
// the project itself are installed, a torch CUDA extension's build, a C
// compiler for code compiled at run time, and where pip finds packages.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "imgsmith/util/error.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {

void Decider::python_install(const PythonProject& py) {
  plan_.install_project = py.installable;
  if (py.lock == "uv.lock") {
    plan_.install_mode = "uv";
  } else if (py.lock == "poetry.lock") {
    plan_.install_mode = "poetry";
    plan_.poetry_packages = tables_.poetry;
  } else if (!py.install_files.empty()) {
    plan_.install_mode = "requirements";
    plan_.requirement_files = py.requirement_files;
    plan_.requirement_files_top = py.install_files;
    plan_.local_install_paths = py.local_install_paths;
  } else if (!py.requirements.empty() && !py.requirements_from_setup_py) {
    plan_.install_mode = "pyproject";
    for (const auto& r : py.requirements) {
      const auto local = py.outside_path_sources.find(r.name);
      if (local == py.outside_path_sources.end()) {
        plan_.pyproject_deps.push_back(shell_quote(r.text));
        continue;
      }
      // pip reads no [tool.uv.sources]: it is given the directory, where
      // the build context's layout puts it beside the project_.
      const std::string in_image = std::filesystem::path(plan_.app_dir + "/" + local->second)
                                       .lexically_normal()
                                       .generic_string();
      plan_.pyproject_deps.push_back(
          shell_quote(r.name + (r.extras.empty() ? "" : "[" + join(r.extras, ",") + "]") +
                      "@file://" + in_image));
      decide(r.source, r.name + " is installed from " + in_image + " (" + local->second +
                           " from the project)");
    }
    for (const auto& index : py.pyproject_indexes)
      if (!contains(plan_.pip_index_args, index)) plan_.pip_index_args.push_back(index);
  } else {
    plan_.install_mode = "none";
  }
  plan_.source_before_deps =
      py.requirements_need_source || (plan_.install_mode == "none" && py.installable);
  // The project's own dependencies come with it unless a layer before
  // already installed them (setup.py projects list theirs only there).
  // pyproject.toml dependencies the requirements do not name come with the
  // project, from the same indexes.
  if (plan_.install_mode == "requirements" && py.project_brings_dependencies) {
    plan_.project_install_args.clear();
    for (const auto& arg : plan_.pip_index_args) plan_.project_install_args += arg + " ";
    for (const auto& option : py.index_options)
      if (!contains(plan_.pip_index_args, option)) plan_.project_install_args += option + " ";
    // The requirements' constraints hold for what only pyproject.toml names.
    for (const auto& file : py.constraint_files)
      plan_.project_install_args += "-c " + shell_quote(file) + " ";
    plan_.project_install_args += ".";
    decide("pyproject.toml",
           "pip installs the project with its own dependencies after the "
           "requirements (those they pin stay as they are)");
  } else {
    plan_.project_install_args = plan_.install_mode == "none" ? "." : "--no-deps .";
  }
  if (plan_.install_mode == "none" && !py.installable)
    decide(".", "no dependencies to install: the code runs on the bare interpreter");
  const bool uv = plan_.install_mode == "uv" || plan_.managed_python;
  plan_.uv_image = uv ? mirrored(tables_.uv_image, options_.registry_mirror) : "";
  const std::string mm = plan_.python;
  if (plan_.kind == "python-cpu") {
    plan_.venv_command = "python -m venv";
    plan_.uv_python = "/usr/local/bin/python" + mm;
  } else if (plan_.managed_python) {
    plan_.venv_command = "uv venv --seed --python " + mm;
    plan_.uv_python = mm;
  } else {
    plan_.venv_command = "python" + mm + " -m venv";
    plan_.uv_python = "/usr/bin/python" + mm;
    const OsPackages& pk = tables_.os.at(plan_.os);
    plan_.builder_apt = pk.python_build;
    if (project_.has_cuda_sources) plan_.builder_apt.push_back("python" + mm + "-dev=" + mm + ".*");
    plan_.final_apt = pk.python_runtime;
  }
  decide(plan_.install_mode == "none"
             ? "."
             : (py.lock.empty()
                    ? (py.install_files.empty() ? "pyproject.toml" : py.install_files.front())
                    : py.lock),
         "installs with " +
             (plan_.install_mode == "uv"       ? std::string("uv sync --frozen")
              : plan_.install_mode == "poetry" ? std::string("poetry export, then pip")
              : plan_.install_mode == "none"   ? std::string("nothing")
                                               : std::string("pip")) +
             " into /opt/venv, in the builder stage" +
             (plan_.source_before_deps ? "" : "; dependencies in their own layer before the code"));
  vcs_tools(py);
}

// pip clones a requirement named by a VCS URL with git, which neither
// NVIDIA's images nor Docker's slim python images carry: the builder gets
// it (the final stage never needs it).
void Decider::vcs_tools(const PythonProject& py) {
  std::string source = py.vcs_source;
  for (const auto& r : py.requirements)
    if (source.empty() && r.text.find("git+") != std::string::npos) source = r.source;
  if (source.empty()) return;
  const std::vector<std::string>& git =
      plan_.kind == "python-cpu" ? tables_.cpu_vcs : tables_.os.at(plan_.os).vcs;
  for (const auto& pkg : git)
    if (!contains(plan_.builder_apt, pkg)) plan_.builder_apt.push_back(pkg);
  decide(source, "installs from a VCS URL, which pip clones with git: the builder gets git");
}

// A torch CUDA extension compiles in the builder, where no GPU is
// visible: torch cannot ask the GPU for its architecture, so
// TORCH_CUDA_ARCH_LIST comes from gen's table; and build isolation would
// install a second torch (maybe another CUDA build) to compile against,
// so the extension builds against the venv's.
void Decider::cuda_extension(const PythonProject& py) {
  if (!plan_.gpu) return;  // the CPU image's warning says why nothing compiles
  const auto a = tables_.cuda_architectures.find(std::to_string(std::stoi(plan_.cuda)));
  if (a != tables_.cuda_architectures.end())
    plan_.torch_cuda_arch_list = torch_arch_list(a->second);
  if (!plan_.install_project) {
    plan_.warnings.push_back(py.cuda_extension_source +
                             ": a CUDA extension, but nothing installs the project (no "
                             "[build-system] or setup.py); the image will not have it");
    return;
  }
  plan_.project_install_args = "--no-build-isolation " + plan_.project_install_args;
  // The compiler setuptools calls, and Python's headers; devel has nvcc.
  if (const std::string gxx = os_package(plan_.os, "g++");
      !gxx.empty() && !contains(plan_.builder_apt, gxx))
    plan_.builder_apt.push_back(gxx);
  if (!plan_.managed_python) {
    const std::string dev = "python" + plan_.python + "-dev=" + plan_.python + ".*";
    if (!contains(plan_.builder_apt, dev)) plan_.builder_apt.push_back(dev);
  }
  // setuptools leaves its build tree and objects beside the code, which
  // the final stage copies: only the venv may carry the result.
  plan_.cleanup_paths.push_back(plan_.app_dir + "/build");
  decide(py.cuda_extension_source,
         "a torch CUDA extension: built on " + plan_.builder_image +
             " with TORCH_CUDA_ARCH_LIST=\"" + plan_.torch_cuda_arch_list +
             "\" (data/cuda-images.json) and pip "
             "--no-build-isolation after torch is installed; build/ and object files "
             "are removed before the final stage copies /app");
  if (py.requirements.empty())
    plan_.warnings.push_back(py.cuda_extension_source +
                             ": the extension builds without build isolation, so torch must "
                             "be installed first: list it in requirements.txt");
}

// Triton (vLLM, SGLang, torch.compile) compiles kernels when the app
// starts, with the C compiler and Python's headers: without them the
// server dies with "Failed to find C compiler" (vllm #2997, sglang #1067).
// This is the one case where a compiler belongs in the final stage.
void Decider::runtime_compiler(const GpuNeeds& g) {
  if (g.runtime_compiler.empty()) return;
  if (!options_.runtime_compiler) {
    decide("--no-runtime-compiler", "no C compiler in the final image, as asked, although " +
                                        g.runtime_compiler_source + ": " + g.runtime_compiler);
    plan_.warnings.push_back(g.runtime_compiler_source + ": " + g.runtime_compiler +
                             "; --no-runtime-compiler left gcc and the Python headers out, so it "
                             "fails at start unless "
                             "the kernels are cached or compiled ahead of time");
    return;
  }
  std::vector<std::string> packages;
  if (plan_.kind == "python-cpu") {
    packages = tables_.cpu_runtime_compiler;  // Docker's python images carry the headers
  } else {
    for (const auto& pkg : tables_.os.at(plan_.os).runtime_compiler)
      // uv's managed Python carries its headers; the OS's needs its -dev.
      if (!plan_.managed_python || pkg.rfind("gcc", 0) == 0) packages.push_back(pkg);
  }
  for (const auto& pkg : packages)
    if (!contains(plan_.final_apt, pkg)) plan_.final_apt.push_back(pkg);
  plan_.runtime_compiler = true;
  std::vector<std::string> names;
  for (const auto& pkg : packages) names.push_back(pkg.substr(0, pkg.find('=')));
  decide(g.runtime_compiler_source, g.runtime_compiler + ": the final image gets " +
                                        join(names, " and ") + " (" +
                                        tables_.runtime_compiler_size + ")");
  plan_.notes.push_back(g.runtime_compiler_source + ": " + g.runtime_compiler +
                        ", so the final image gets " + join(names, " and ") + ", " +
                        tables_.runtime_compiler_size +
                        "; --no-runtime-compiler leaves them "
                        "out");
}

// --wheelhouse and --index-url replace where pip looks, for air-gapped
// builds and private mirrors; a lock names its own sources.
void Decider::package_sources(const PythonProject& py) {
  if (options_.wheelhouse.empty() && options_.index_url.empty()) return;
  if (!py.lock.empty())
    throw InputError(
        std::string(options_.wheelhouse.empty() ? "--index-url" : "--wheelhouse") + ": " + py.lock +
        " decides where packages come from; configure the index in pyproject.toml instead");
  if (!options_.wheelhouse.empty()) {
    const std::filesystem::path rel = std::filesystem::path(options_.wheelhouse).lexically_normal();
    if (rel.is_absolute() || rel.empty() || *rel.begin() == "..")
      throw InputError("--wheelhouse " + options_.wheelhouse +
                       ": give a directory inside the project (it is part of "
                       "the build context)");
    if (!std::filesystem::is_directory(project_.dir / rel))
      throw InputError("--wheelhouse " + options_.wheelhouse + ": no such directory in " +
                       project_.dir.string());
    plan_.wheelhouse = rel.generic_string();
    while (plan_.wheelhouse.size() > 1 && plan_.wheelhouse.back() == '/')
      plan_.wheelhouse.pop_back();
    // A bind mount, not a COPY: the wheels (gigabytes with torch) reach
    // no layer, and COPY . . brings a second copy that is removed from
    // /app before the final stage copies it.
    plan_.pip_index_args = {"--no-index", "--find-links /wheels"};
    plan_.cleanup_paths.push_back(shell_quote(plan_.app_dir + "/" + plan_.wheelhouse));
    if (plan_.install_project)
      plan_.project_install_args = "--no-index --find-links /wheels " + plan_.project_install_args;
    decide("--wheelhouse", "pip installs only from " + plan_.wheelhouse +
                               " (bind-mounted at /wheels), with no index; "
                               "the wheels never reach the final image");
  } else {
    plan_.pip_index_args.erase(
        std::remove_if(plan_.pip_index_args.begin(), plan_.pip_index_args.end(),
                       [](const std::string& a) { return a.rfind("--index-url", 0) == 0; }),
        plan_.pip_index_args.end());
    // A private index or mirror is the only source: the public PyTorch
    // indexes gen would add for torch's CUDA build go; the mirror must
    // carry that build.
    std::vector<std::string> dropped;
    plan_.pip_index_args.erase(
        std::remove_if(plan_.pip_index_args.begin(), plan_.pip_index_args.end(),
                       [&](const std::string& a) {
                         if (a.find(tables_.torch_index_url) == std::string::npos) return false;
                         dropped.push_back(a.substr(a.find(' ') + 1));
                         return true;
                       }),
        plan_.pip_index_args.end());
    plan_.pip_index_args.insert(plan_.pip_index_args.begin(), "--index-url " + options_.index_url);
    if (plan_.install_project)
      plan_.project_install_args =
          "--index-url " + options_.index_url + " " + plan_.project_install_args;
    if (!dropped.empty())
      plan_.warnings.push_back("--index-url " + options_.index_url + ": gen left out " +
                               join(dropped, ", ") +
                               "; your index must carry those builds (torch's CUDA wheels)");
    for (const auto& opt : py.index_options)
      plan_.warnings.push_back(
          "--index-url " + options_.index_url + ": a requirements file still names '" + opt +
          "', which pip reads at build time; remove it for a build that uses your index alone");
    decide("--index-url",
           "pip's index is " + options_.index_url + ", and no public index is named");
  }
}

}  // namespace imgsmith::gen
