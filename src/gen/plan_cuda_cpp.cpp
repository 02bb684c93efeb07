// The plan for a CUDA C/C++ project: the CUDA release its CMake lists or
// sources need, the CMake the builder needs, the architectures compiled for
// and the programs the image runs.
#include <algorithm>
#include <string>
#include <vector>

#include "imgsmith/util/error.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {

void Decider::cuda_cpp(const CudaCppProject& cpp) {
  plan_.kind = "cuda-cpp";
  plan_.gpu = true;
  // Detection's doubts that would fail the build are warnings.
  for (const auto& e : project_.evidence)
    if (e.text.rfind("warning: ", 0) == 0)
      plan_.warnings.push_back(e.source + ": " + e.text.substr(9));
  Need need = Need::Bundled;
  std::vector<std::string> reasons;
  std::vector<std::string> system_libs;
  for (const auto& lib : cpp.cuda_libs) {
    if (lib == "cudart" || lib == "cudart_static" || lib == "cuda_driver" || lib == "cuda")
      continue;
    system_libs.push_back(lib);
    need = std::max(need, lib.rfind("cudnn", 0) == 0 ? Need::SystemCudnn : Need::System);
  }
  if (contains(cpp.cuda_libs, "nccl"))
    decide("CMakeLists.txt",
           "NCCL: runtime carries libnccl2 and the devel builder libnccl-dev (its headers)");
  if (system_libs.empty())
    reasons.push_back(
        "the program links only the CUDA runtime, so runtime's libraries would go unused");
  else
    reasons.push_back("the program links " + join(system_libs, ", ") +
                      ", which runtime carries and base does not");
  std::string cuda = tables_.default_cuda;
  std::string why = "gen's default";
  if (!options_.cuda.empty() && !cpp.min_cuda.empty() &&
      version_less(major_minor(options_.cuda), major_minor(cpp.min_cuda)))
    throw InputError("--cuda " + options_.cuda + ": " + cpp.min_cuda_source +
                     " asks for find_package(CUDAToolkit " + cpp.min_cuda +
                     "), so CMake would stop at configure with an older toolkit; pass --cuda " +
                     major_minor(cpp.min_cuda) +
                     " or newer, or lower the version in CMakeLists.txt");
  if (!options_.cuda.empty()) {
    cuda = options_.cuda;
    why = "--cuda";
  } else if (!cpp.min_cuda.empty() && version_less(cuda, cpp.min_cuda)) {
    cuda = major_minor(cpp.min_cuda);
    why = "find_package(CUDAToolkit " + cpp.min_cuda + ")";
  }
  decide(why == "--cuda" ? "--cuda" : "data/cuda-images.json", "CUDA " + cuda + " (" + why + ")");
  const CudaRelease& release = release_for(cuda, why);
  choose_flavor(need, reasons, false);
  plan_.os = choose_os(release);
  if (cpp.cmake) cmake_version(cpp, release);
  set_images(release, true);
  if (cpp.cmake)
    for (const auto& pkg : tables_.os.at(plan_.os).cmake_build)
      if (plan_.cmake_from_pypi.empty() || pkg.rfind("cmake=", 0) != 0)
        plan_.builder_apt.push_back(pkg);
  // nvcc alone compiles host code with the system's g++ ("Failed to
  // preprocess host compiler properties" without one): installed by name,
  // not assumed to come with devel.
  if (!cpp.cmake) {
    plan_.builder_apt.clear();
    if (const std::string gxx = os_package(plan_.os, "g++"); !gxx.empty())
      plan_.builder_apt.push_back(gxx);
  }
  plan_.probe = options_.probe;
  plan_.probe_image = options_.probe_image;
  plan_.cmake = cpp.cmake;
  plan_.cmake_install = cpp.cmake_install;
  std::vector<std::string> archs;
  const auto a = tables_.cuda_architectures.find(std::to_string(std::stoi(release.cuda)));
  if (a != tables_.cuda_architectures.end()) archs = a->second;
  // The project's CMAKE_CUDA_ARCHITECTURES wins: a -D on the command line
  // would override its default, against what --explain says.
  set_architectures(archs, !cpp.sets_architectures || !cpp.cmake);
  decide(cpp.sets_architectures ? "CMakeLists.txt" : "data/cuda-images.json",
         cpp.sets_architectures
             ? "the project's own CUDA architectures win over gen's default"
             : "compiles SASS for sm_" + join(archs, ", sm_") + " and PTX for the newest");
  if (cpp.cmake) {
    plan_.targets = cpp.targets;
    decide("CMakeLists.txt", cpp.cmake_install
                                 ? "installs with cmake --install into /opt/app"
                                 : "copies the executables into /opt/app/bin (no install() rules)");
  } else {
    plan_.targets = {project_.name};
    for (const auto& source : cpp.sources) plan_.nvcc_sources.push_back(shell_quote(source));
    for (const auto& lib : cpp.cuda_libs) plan_.nvcc_libs.push_back("-l" + lib);
  }
  if (!options_.cmd.empty()) {
    plan_.cmd = options_.cmd;
  } else {
    const std::string& first = plan_.targets.front();
    const auto slash = first.rfind('/');
    plan_.cmd = {"/opt/app/bin/" + (slash == std::string::npos ? first : first.substr(slash + 1))};
    if (plan_.targets.size() > 1)
      decide("CMakeLists.txt", "runs " + plan_.cmd.front() + ", the first of " +
                                   std::to_string(plan_.targets.size()) +
                                   " executables (--cmd picks another)");
  }
  if (!options_.cmd.empty()) listen_outside(true, "--cmd");
  if (options_.port != 0) use_port(false);
  size_class(" plus the program");
}

// A package of the OS's C++ build set as apt pins it ("g++=4:13.*"),
// or "" when the table has none.
std::string Decider::os_package(const std::string& os, const std::string& name) {
  for (const auto& pkg : tables_.os.at(os).cmake_build)
    if (pkg.rfind(name + "=", 0) == 0) return pkg;
  return "";
}

// The OS's CMake (its apt series, "cmake=3.22.*"), as X.Y.
std::string Decider::os_cmake(const std::string& os) {
  const std::string pkg = os_package(os, "cmake");
  return pkg.empty() ? "" : major_minor(pkg.substr(6));
}

// cmake_minimum_required above the builder OS's CMake stops the build at
// its first line: another OS of the release whose CMake suffices, else
// CMake's own wheels from PyPI, installed by uv (they are self-contained).
void Decider::cmake_version(const CudaCppProject& cpp, const CudaRelease& release) {
  if (cpp.min_cmake.empty()) return;
  const std::string need = major_minor(cpp.min_cmake);
  const std::string have = os_cmake(plan_.os);
  if (have.empty() || !version_less(have, need)) return;
  if (options_.os.empty())
    for (const auto& os : release.os)
      if (const std::string c = os_cmake(os); !c.empty() && !version_less(c, need)) {
        decide(cpp.min_cmake_source, "cmake_minimum_required(VERSION " + cpp.min_cmake +
                                         "): " + plan_.os + "'s CMake is " + have + ", " + os +
                                         "'s " + c + ", so the images are on " + os);
        plan_.os = os;
        return;
      }
  plan_.cmake_from_pypi = need;
  plan_.uv_image = mirrored(tables_.uv_image, options_.registry_mirror);
  decide(cpp.min_cmake_source,
         "cmake_minimum_required(VERSION " + cpp.min_cmake + "): " + plan_.os + "'s CMake is " +
             have + ", so the builder installs CMake " + need + ".* from PyPI with uv");
}

std::string torch_arch_list(const std::vector<std::string>& archs) {
  std::vector<std::string> list;
  for (const auto& sm : archs)
    list.push_back(sm.substr(0, sm.size() - 1) + "." + sm.substr(sm.size() - 1));
  if (!list.empty()) list.back() += "+PTX";
  return join(list, ";");
}

void Decider::set_architectures(const std::vector<std::string>& archs, bool cmake_too) {
  std::vector<std::string> cmake_archs, gencode;
  for (std::size_t i = 0; i < archs.size(); ++i) {
    const bool last = i + 1 == archs.size();
    cmake_archs.push_back(last ? archs[i] : archs[i] + "-real");
    gencode.push_back("-gencode arch=compute_" + archs[i] + ",code=sm_" + archs[i]);
    if (last) gencode.push_back("-gencode arch=compute_" + archs[i] + ",code=compute_" + archs[i]);
  }
  if (cmake_too) plan_.cuda_architectures = join(cmake_archs, ";");
  plan_.nvcc_arch_flags = join(gencode, " ");
  if (!plan_.torch_cuda_arch_list.empty()) plan_.torch_cuda_arch_list = torch_arch_list(archs);
}

void Decider::apply_target_gpus() {
  const auto& wanted = options_.target_gpus;
  if (wanted.empty()) return;
  if (!plan_.gpu) {
    plan_.warnings.push_back("--gpu " + join(wanted, ",") +
                             ": nothing in the project uses a GPU, so the image is a CPU image "
                             "and runs on any of them");
    return;
  }
  const TargetArchitectures t = target_architectures(wanted, plan_.cuda, tables_);
  if (!t.missing.empty()) {
    // The first torch release with wheels built on that CUDA, for the fix.
    std::string torch;
    for (const auto& r : tables_.torch)
      for (const auto& build : r.builds)
        if (torch.empty() && !version_less(build, t.needed_cuda))
          torch = "torch " + r.torch + " (its cu" + build.substr(0, build.find('.')) +
                  build.substr(build.find('.') + 1) + " wheels)";
    throw InputError(
        "--gpu " + join(t.gpus, ",") + ": the image's CUDA is " + plan_.cuda +
        ", and no framework or build on it has kernels for " + join(t.missing, ", ") +
        ": it would fail there with \"no kernel image is available for execution on "
        "the device\"; pass "
        "--cuda " +
        t.needed_cuda + " or newer" +
        (torch.empty() ? "" : ", with a framework built for it: " + torch + " or newer"));
  }
  set_architectures(t.archs, true);
  const bool builds = !plan_.cuda_architectures.empty() || !plan_.torch_cuda_arch_list.empty();
  decide("--gpu", builds ? "the project's CUDA code is compiled for " + join(t.gpus, ", ") +
                               ": SASS for sm_" + join(t.archs, ", sm_") +
                               " and PTX for the newest, nothing for other GPUs"
                         : "CUDA " + plan_.cuda + " has kernels for " + join(t.gpus, ", "));
}

}  // namespace imgsmith::gen
