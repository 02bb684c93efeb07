// The plan's flavour (base, runtime, devel; with cuDNN or not), the final
// and builder images it names, and the size class the summary shows.
#include <cstdint>
#include <string>
#include <vector>

#include "imgsmith/util/error.hpp"
#include "imgsmith/util/size.hpp"
#include "plan_internal.hpp"

namespace imgsmith::gen {
namespace {

std::string flavor_for(Need need) { return need >= Need::System ? "runtime" : "base"; }

std::string size_text(double bytes) { return format_size(static_cast<std::uint64_t>(bytes)); }

}  // namespace

void Decider::choose_flavor(Need need, const std::vector<std::string>& reasons,
                            bool bundled_torch) {
  plan_.cudnn = need == Need::SystemCudnn || options_.cudnn;
  const std::string needed = flavor_for(need);
  plan_.flavor = options_.flavor == "auto" ? needed : options_.flavor;
  if (plan_.flavor == "base" && options_.cudnn)
    throw InputError(
        "--cudnn: NVIDIA publishes no cuDNN image of the base flavour; use --flavor runtime "
        "--cudnn");
  const Flavour& base = tables_.flavours.at("base");
  const Flavour& runtime = tables_.flavours.at("runtime");
  const Flavour& devel = tables_.flavours.at("devel");
  if (options_.flavor == "auto") {
    plan_.why_base.push_back(
        std::string(plan_.cudnn ? "runtime flavour with cuDNN: " : plan_.flavor + " flavour: ") +
        join(reasons, "; ") + ".");
  } else {
    plan_.why_base.push_back(plan_.flavor + " flavour, as asked (--flavor).");
  }
  if (options_.flavor == "devel") {
    plan_.warnings.push_back(
        "--flavor devel ships nvcc, headers and static libraries (" + devel.size +
        ") that no built program uses; the builder stage already has them. --flavor " + needed +
        " is " + tables_.flavours.at(needed).size + ".");
  }
  if (options_.flavor == "runtime" && need == Need::Bundled) {
    const double saved = runtime.approx_bytes - base.approx_bytes +
                         (plan_.cudnn ? tables_.cudnn_extra.approx_bytes : 0);
    plan_.warnings.push_back(
        std::string(bundled_torch ? "torch" : "the framework") +
        " ships its own CUDA libraries as pip wheels, so runtime's copies are a second set "
        "that nothing loads: --flavor base saves about " +
        size_text(saved) + " (runtime " + runtime.size + " against base " + base.size + ").");
  }
  if (options_.flavor == "base" && need >= Need::System) {
    plan_.warnings.push_back(
        "--flavor base lacks the CUDA libraries this project loads from the system (" +
        join(reasons, "; ") + "); expect it to fail at run time. --flavor runtime" +
        (need == Need::SystemCudnn ? " --cudnn" : "") + " has them.");
  }
}

void Decider::set_images(const CudaRelease& release, bool builder_devel) {
  plan_.cuda = release.cuda;
  plan_.min_driver = min_driver(release.cuda);
  // No cuDNN image of the base flavour exists; the builder still gets
  // cuDNN's headers when the code needs them.
  std::string final_image =
      tag(release, plan_.flavor, plan_.cudnn && plan_.flavor != "base", plan_.os);
  if (!options_.base.empty()) {
    final_image = options_.base;
    plan_.nvidia_env = true;
    plan_.why_base.push_back("final stage on " + options_.base + " (--base); the builder uses " +
                             tables_.repository + ".");
  }
  plan_.final_image = mirrored(final_image, options_.registry_mirror);
  // A Python builder installs into a venv on the same image as the final
  // stage, so compiled wheels see the same libraries; compiling CUDA code
  // needs devel.
  const std::string builder =
      builder_devel ? tag(release, "devel", plan_.cudnn, plan_.os)
                    : tag(release, plan_.flavor, plan_.cudnn && plan_.flavor != "base", plan_.os);
  plan_.builder_image = mirrored(builder, options_.registry_mirror);
  decide(plan_.os, "final image " + plan_.final_image + "; builder " + plan_.builder_image);
  decide("data/cuda-drivers.json",
         "the image sets NVIDIA_REQUIRE_CUDA=cuda>=" + major_minor(release.cuda) +
             ", so the host driver must be >= " + std::to_string(plan_.min_driver) + " (" +
             tables_.require_cuda_source + ")");
}

void Decider::size_class(const std::string& extra) {
  std::string s;
  if (!options_.base.empty())
    s = options_.base;
  else if (plan_.flavor.empty())
    s = "no CUDA: " + plan_.final_image;
  else
    s = plan_.flavor + " " + tables_.flavours.at(plan_.flavor).size +
        (plan_.cudnn && plan_.flavor != "base" ? ", cuDNN " + tables_.cudnn_extra.size : "");
  plan_.size_class = s + extra;
}

}  // namespace imgsmith::gen
