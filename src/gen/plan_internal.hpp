// What the pieces of the plan share and nothing else in gen needs: the
// Decider, which takes the plan's decisions one after another and records
// each with its reason for `--explain` and the summary. Its member functions
// are defined by subject: the CUDA release (plan_cuda_release.cpp), what the
// dependencies need from CUDA (plan_gpu_needs.cpp), the flavour and the
// images (plan_flavour.cpp), Python (plan_python.cpp), the install steps
// (plan_install.cpp), CUDA C/C++ (plan_cuda_cpp.cpp), and the rest, with
// make_plan (plan.cpp).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "decisions.hpp"
#include "gen_internal.hpp"
#include "imgsmith/gen/gen.hpp"

namespace imgsmith::gen {

// How much of a CUDA image a project needs, in increasing order.
enum class Need { None = 0, Bundled = 1, System = 2, SystemCudnn = 3 };

inline bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The word as a shell reads it: quoted unless it is plain.
std::string shell_quote(const std::string& word);
// The image reference as pulled through the mirror (--registry-mirror);
// the reference itself when `mirror` is empty.
std::string mirrored(const std::string& ref, const std::string& mirror);
// TORCH_CUDA_ARCH_LIST for SASS of each of `archs` ("90") and PTX for the
// last: "8.6;9.0+PTX".
std::string torch_arch_list(const std::vector<std::string>& archs);

class Decider {
 public:
  Decider(const Project& project, const Options& options);

  // All the decisions, in order: the plan for the project.
  Plan make();

 private:
  void decide(const std::string& source, const std::string& text) {
    plan_.explain.push_back({source, text});
  }

  // ----- the CUDA release and the OS (plan_cuda_release.cpp) ---------------
  std::string cuda_for_major(const std::string& spec);
  std::string lowest_of_major(const std::string& major);
  const CudaRelease& release_for(const std::string& wanted, const std::string& why);
  const CudaRelease& release_with_cudnn(const std::string& wanted, const std::string& why,
                                        int cudnn, const std::string& framework, bool asked);
  std::string choose_os(const CudaRelease& release);
  std::string tag(const CudaRelease& release, const std::string& flavor, bool cudnn,
                  const std::string& os);
  int min_driver(const std::string& cuda);

  // ----- what the dependencies need from CUDA (plan_gpu_needs.cpp) ---------
  struct GpuNeeds {
    Need need = Need::None;
    std::vector<std::string> reasons;
    const Requirement* torch = nullptr;
    bool cpu_torch = false;
    std::string cuda;         // what a framework's build expects, when it says
    std::string cuda_source;  // which requirement said it
    // The CUDA above came from a framework that loads the system's CUDA
    // libraries (data/framework-cuda.json), which the image must then carry.
    bool cuda_loaded_from_system = false;
    int cudnn = 0;  // the cuDNN major a framework's build loads; 0 when none says
    std::string cudnn_source;
    std::string runtime_compiler;         // why something compiles code when the app runs (Triton)
    std::string runtime_compiler_source;  // which requirement
  };

  void torch_pinned_by(const Requirement& r, const FrameworkNeed& f);
  void framework_build(const Requirement& r, GpuNeeds& g);
  GpuNeeds python_needs(const PythonProject& py);
  std::string torch_cuda(const PythonProject& py, const Requirement& torch);

  // ----- the flavour and the images (plan_flavour.cpp) ---------------------
  void choose_flavor(Need need, const std::vector<std::string>& reasons, bool bundled_torch);
  void set_images(const CudaRelease& release, bool builder_devel);
  void size_class(const std::string& extra);

  // ----- Python projects (plan_python.cpp) ---------------------------------
  std::string python_for_cpu(const PythonProject& py);
  void choose_gpu_python(const PythonProject& py, const CudaRelease& release);
  void python(const PythonProject& py);

  // ----- the install steps (plan_install.cpp) ------------------------------
  void python_install(const PythonProject& py);
  void vcs_tools(const PythonProject& py);
  void cuda_extension(const PythonProject& py);
  void runtime_compiler(const GpuNeeds& g);
  void package_sources(const PythonProject& py);

  // ----- CUDA C/C++ projects (plan_cuda_cpp.cpp) ---------------------------
  void cuda_cpp(const CudaCppProject& cpp);
  std::string os_package(const std::string& os, const std::string& name);
  std::string os_cmake(const std::string& os);
  void cmake_version(const CudaCppProject& cpp, const CudaRelease& release);
  // SASS for each of `archs` and PTX for the last, spelt for CMake (when
  // `cmake_too`: not over a project's own architectures unless --gpu asked),
  // nvcc, and torch's extension builds (when one is built).
  void set_architectures(const std::vector<std::string>& archs, bool cmake_too);
  // --gpu: the architectures of the GPUs the image must run on, or a
  // refusal naming the CUDA release that has kernels for them.
  void apply_target_gpus();

  // ----- the rest (plan.cpp) -----------------------------------------------
  // The results of the decision functions (decisions.hpp), applied.
  void apply_unknown_packages();
  void apply_system_libraries();
  void apply_writable_paths();
  void apply_image_check();
  void apply_context_hygiene();
  void use_port(bool detected_command);
  // The port and address the command's server listens on (decide_server.cpp's
  // table): the port from the command, and on a loopback-only server the
  // arguments that open it, added to a detected command or said for --cmd.
  void warn_server_without_port(const PythonProject& py);
  void task_workers(const PythonProject& py);
  void listen_outside(bool told, const std::string& source,
                      const std::string& configured_host = "");
  void system_packages();
  std::vector<std::string> package_on_os(const std::string& source, const std::string& spec,
                                         const std::string& os);
  // plan_models.cpp: the models' VRAM, told to the probe.
  void models();
  PythonProject with_extras(const PythonProject& given);
  void known_cog_python(PythonProject& py);
  void build_context();
  void validate();

  const Project& project_;
  const Options& options_;
  const Tables& tables_;
  Plan plan_;
  // A warning already says the image's port is unknown or is the user's to
  // give, so no later check says it again.
  bool port_said_ = false;
  // The torch a framework pins (vllm==0.8.5 installs torch==2.6.0), so that
  // torch's CUDA build decides the image, as if the project had listed it.
  Requirement implied_torch_;
  std::vector<std::string> extras_;  // the extras installed with the project ([gen] extras)
  // What each requirement needs, parallel to the requirements python() decides on.
  std::vector<PackageVerdict> verdicts_;
  std::vector<const PackageVerdict*> unknown_;  // those of verdicts_ a user must hear about
  // The Pythons the frameworks' wheels exist for; checked by every choice
  // of Python below.
  PythonFromWheels wheels_;
  bool wheels_fit(const std::string& python) const {
    return !wheels_.constrained || wheels_.allowed.count(python) != 0;
  }
  // The newest Python gen knows that satisfies the project, and the wheels
  // too `with_wheels` (the preferred one first); "" when none does.
  std::string newest_python(const PythonProject& py, bool with_wheels) const;
};

}  // namespace imgsmith::gen
