// The plan's CUDA release and OS: the nvidia/cuda image a CUDA version
// names, one whose cuDNN a framework loads, the OS, the tag, and the
// driver the image asks of its host.
#include <string>
#include <vector>

#include "imgsmith/util/error.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {

// "12" -> gen's default when it is a 12.x, else the newest 12.x release.
std::string Decider::cuda_for_major(const std::string& spec) {
  if (spec.find('.') != std::string::npos) return spec;
  if (tables_.default_cuda.rfind(spec + ".", 0) == 0) return tables_.default_cuda;
  std::string newest;
  for (const auto& r : tables_.releases)
    if (r.cuda.rfind(spec + ".", 0) == 0) newest = major_minor(r.cuda);
  return newest.empty() ? spec : newest;
}

std::string Decider::lowest_of_major(const std::string& major) {
  for (const auto& r : tables_.releases)
    if (r.cuda.rfind(major + ".", 0) == 0) return major_minor(r.cuda);
  return cuda_for_major(major);
}

const CudaRelease& Decider::release_for(const std::string& wanted, const std::string& why) {
  for (const auto& r : tables_.releases)
    if (r.cuda == wanted || r.cuda.rfind(wanted + ".", 0) == 0) return r;
  std::vector<std::string> all;
  for (const auto& r : tables_.releases) all.push_back(r.cuda);
  throw InputError("CUDA " + wanted + " (" + why + ") has no " + tables_.repository +
                   " image in gen's table; choose one of " + join(all, ", ") + " with --cuda");
}

// A release whose cuDNN images carry the cuDNN major a framework loads: a
// cuDNN 8 build cannot load cuDNN 9, and the reverse. NVIDIA did not publish
// every CUDA release with every cuDNN, so the nearest older release of the
// same CUDA major stands in (its libraries load by major version, the same
// sonames), with a warning; an explicit --cuda is never changed.
const CudaRelease& Decider::release_with_cudnn(const std::string& wanted, const std::string& why,
                                               int cudnn, const std::string& framework,
                                               bool asked) {
  const CudaRelease& exact = release_for(wanted, why);
  if (exact.cudnn_major == cudnn) return exact;
  std::vector<const CudaRelease*> same_major;
  std::vector<std::string> names;
  for (const auto& r : tables_.releases)
    if (r.cudnn_major == cudnn) {
      names.push_back(r.cuda);
      if (std::stoi(r.cuda) == std::stoi(wanted)) same_major.push_back(&r);
    }
  const std::string need = framework + " loads cuDNN " + std::to_string(cudnn);
  if (asked || same_major.empty())
    throw InputError((asked ? "--cuda " + wanted : "CUDA " + wanted + " (" + why + ")") + ": " +
                     need + ", and " + tables_.repository + "'s " + exact.cuda +
                     " cuDNN images carry cuDNN " + std::to_string(exact.cudnn_major) + "; " +
                     (names.empty() ? "gen's table has no image with it"
                                    : "choose one of " + join(names, ", ") + " with --cuda") +
                     ", or pin a release of the framework built for cuDNN " +
                     std::to_string(exact.cudnn_major));
  const CudaRelease* chosen = same_major.front();
  for (const auto* r : same_major)
    if (!version_less(wanted, major_minor(r->cuda)))
      chosen = r;  // the newest not above the wanted release
  plan_.warnings.push_back(
      need + " and was built for CUDA " + wanted + ", but NVIDIA publishes no cuDNN " +
      std::to_string(cudnn) + " image for it; gen uses " + chosen->cuda + " (" + chosen->cudnn_tag +
      "), the nearest CUDA " + std::to_string(std::stoi(wanted)) + " release with cuDNN " +
      std::to_string(cudnn) + ". Test the image, or pass --cuda");
  decide("data/cuda-images.json",
         "CUDA " + chosen->cuda + ": the nearest release whose cuDNN images carry cuDNN " +
             std::to_string(cudnn) + " (" + framework + " asked for " + wanted + ")");
  return *chosen;
}

std::string Decider::choose_os(const CudaRelease& release) {
  if (!options_.os.empty()) {
    if (!contains(release.os, options_.os))
      throw InputError("--os " + options_.os + ": CUDA " + release.cuda + " images exist for " +
                       join(release.os, " and ") + " only");
    return options_.os;
  }
  for (const auto& os : tables_.os_preference)
    if (contains(release.os, os)) return os;
  return release.os.front();
}

std::string Decider::tag(const CudaRelease& release, const std::string& flavor, bool cudnn,
                         const std::string& os) {
  return tables_.repository + ":" + release.cuda + "-" + (cudnn ? release.cudnn_tag + "-" : "") +
         flavor + "-" + os;
}

// NVIDIA's images set NVIDIA_REQUIRE_CUDA=cuda>=X.Y, and the container
// toolkit refuses a host whose driver supports less: the image's X.Y
// decides, not the CUDA major's minor-version compatibility floor.
int Decider::min_driver(const std::string& cuda) {
  if (const auto it = tables_.require_cuda_driver.find(major_minor(cuda));
      it != tables_.require_cuda_driver.end())
    return it->second;
  const auto it = tables_.minimum_driver.find(std::stoi(cuda));
  return it == tables_.minimum_driver.end() ? 0 : it->second;
}

}  // namespace imgsmith::gen
