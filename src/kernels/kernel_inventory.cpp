#include "imgsmith/kernels/kernel_inventory.hpp"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "imgsmith/kernels/fatbin_format.hpp"
#include "kernels_data.hpp"

namespace imgsmith {
namespace {

// The SASS the driver loads on `cc`: the highest architecture that runs
// there, of the modules with a kernel; nullptr when none does.
const KernelCode* loaded_sass(const CudaBinary& binary, unsigned cc) {
  return fatbin::code_on_gpu<KernelCode>(binary.code, cc).sass;
}

const nlohmann::json& drivers() {
  static const nlohmann::json doc = nlohmann::json::parse(kernels_data().at("cuda-drivers.json"));
  return doc;
}

}  // namespace

std::uint64_t KernelInventory::sass_bytes() const {
  std::uint64_t n = 0;
  for (const auto& b : binaries) n += b.binary.sass_bytes();
  return n;
}

std::uint64_t KernelInventory::ptx_bytes() const {
  std::uint64_t n = 0;
  for (const auto& b : binaries) n += b.binary.ptx_bytes();
  return n;
}

BinaryOnGpu binary_on_gpu(const CudaBinary& binary, unsigned cc) {
  BinaryOnGpu out;
  const auto on = fatbin::code_on_gpu<KernelCode>(binary.code, cc);
  out.other_sass_bytes = sass_bytes_unused_by(binary, {cc});
  if (!on.any_kernel) {
    out.verdict = KernelVerdict::Sass;  // nothing to load, nothing to fail
    out.code = "no kernels";
  } else if (on.sass != nullptr) {
    out.verdict = KernelVerdict::Sass;
    out.code = on.sass->name();
  } else if (on.ptx != nullptr) {
    out.verdict = KernelVerdict::Jit;
    out.code = on.ptx->name();
    out.ptx_isa = on.ptx->version;
    out.jit_bytes = on.jit_bytes;
  }
  return out;
}

std::uint64_t sass_bytes_unused_by(const CudaBinary& binary, const std::vector<unsigned>& ccs) {
  // The architectures (with their variant) some GPU loads.
  std::vector<std::pair<unsigned, char>> loaded;
  for (const unsigned cc : ccs)
    if (const KernelCode* best = loaded_sass(binary, cc))
      loaded.emplace_back(best->arch, best->variant);
  std::uint64_t unused = 0;
  for (const KernelCode& c : binary.code)
    if (c.kind == KernelKind::Sass &&
        std::find(loaded.begin(), loaded.end(), std::make_pair(c.arch, c.variant)) == loaded.end())
      unused += c.bytes;
  return unused;
}

std::vector<GpuKernelVerdict> verdicts_per_gpu(const KernelInventory& inventory,
                                               const std::vector<Gpu>& gpus) {
  std::vector<GpuKernelVerdict> out;
  for (const Gpu& gpu : gpus) {
    GpuKernelVerdict v{gpu, {}, {}, 0, 0};
    for (const auto& b : inventory.binaries) {
      const BinaryOnGpu on = binary_on_gpu(b.binary, gpu.compute_capability);
      if (on.verdict == KernelVerdict::None) {
        v.none.push_back(b.path);
      } else if (on.verdict == KernelVerdict::Jit) {
        v.jit.push_back(b.path);
        v.jit_bytes += on.jit_bytes;
        v.jit_ptx_isa = std::max(v.jit_ptx_isa, on.ptx_isa);
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string compute_capability_text(unsigned cc) {
  return std::to_string(cc / 10) + "." + std::to_string(cc % 10);
}

std::string ptx_isa_text(unsigned isa) {
  return std::to_string(isa / 10) + "." + std::to_string(isa % 10);
}

std::string cuda_for_ptx_isa(unsigned isa) {
  const auto& table = drivers().at("ptx_isa");
  if (const auto it = table.find(ptx_isa_text(isa)); it != table.end() && it->is_string())
    return it->get<std::string>();
  return {};
}

unsigned driver_for_cuda(const std::string& cuda_release) {
  const auto& table = drivers().at("require_cuda");
  if (const auto it = table.find(cuda_release); it != table.end() && it->is_number_unsigned())
    return it->get<unsigned>();
  return 0;
}

DriverNeed driver_need(const KernelInventory& inventory) {
  DriverNeed need;
  for (const auto& [path, binary] : inventory.binaries)
    if (const unsigned driver = driver_for_cudart(binary.cudart); driver > need.driver) {
      need.driver = driver;
      need.cudart = binary.cudart;
      need.path = path;
    }
  // "cuda>=12.4 brand=tesla,driver>=470,driver<471 ...": the brand terms
  // admit older long-term branches of datacenter drivers through the
  // image's cuda-compat; the cuda term is the rule.
  const std::string_view require = inventory.require_cuda;
  constexpr std::string_view term = "cuda>=";
  for (std::size_t at = require.find(term); at != std::string_view::npos;
       at = require.find(term, at + 1)) {
    if (at > 0 && require[at - 1] != ' ') continue;
    const std::size_t begin = at + term.size();
    const std::size_t end = std::min(require.find_first_of(" ,", begin), require.size());
    need.require_cuda = std::string(require.substr(begin, end - begin));
    need.require_driver = driver_for_cuda(need.require_cuda);
    break;
  }
  return need;
}

std::string driver_need_warning(const DriverNeed& need) {
  if (need.driver == 0 || need.require_cuda.empty()) return {};
  const std::string major = need.cudart.substr(std::string_view("libcudart.so.").size());
  // A release the table does not list (CUDA 10.2, 13.1) still says enough
  // when its major is older than the runtime's: every driver of an older
  // major predates the first one of a newer.
  const bool older_major = std::atoi(need.require_cuda.c_str()) < std::atoi(major.c_str());
  if (need.require_driver == 0 ? !older_major : need.driver <= need.require_driver) return {};
  const std::string admitted = need.require_driver > 0
                                   ? "drivers from " + std::to_string(need.require_driver)
                                   : "CUDA " + need.require_cuda + " drivers";
  return "NVIDIA_REQUIRE_CUDA=cuda>=" + need.require_cuda + " lets this image start on " +
         admitted + ", but " + need.path + " needs " + need.cudart + ", which runs on " +
         std::to_string(need.driver) +
         " or newer: on a driver in between the container starts and CUDA fails at its first "
         "call (\"CUDA driver version is insufficient for CUDA runtime version\"); set "
         "NVIDIA_REQUIRE_CUDA=cuda>=" +
         major + ".0 (or build on a CUDA " + major +
         " base image) so that such a host refuses the container, saying why";
}

unsigned cuda_release_number(const std::string& release) {
  const std::size_t dot = release.find('.');
  if (dot == std::string::npos) return 0;
  return static_cast<unsigned>(std::atoi(release.c_str())) * 1000 +
         static_cast<unsigned>(std::atoi(release.c_str() + dot + 1)) * 10;
}

std::string first_cuda_for_arch(unsigned arch) {
  static const nlohmann::json doc =
      nlohmann::json::parse(kernels_data().at("cuda-images.json")).at("architecture_first_cuda");
  const auto it = doc.find(std::to_string(arch));
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::pair<std::string, std::string> first_torch_on_cuda(const std::string& cuda) {
  static const nlohmann::json doc = nlohmann::json::parse(kernels_data().at("torch-cuda.json"));
  const unsigned need = cuda_release_number(cuda);
  if (need == 0) return {};
  for (const auto& release : doc.at("releases"))  // oldest first
    for (const auto& build : release.at("builds"))
      if (cuda_release_number(build.get<std::string>()) >= need)
        return {release.at("torch").get<std::string>(), build.get<std::string>()};
  return {};
}

unsigned driver_for_cudart(const std::string& cudart) {
  constexpr std::string_view prefix = "libcudart.so.";
  if (!std::string_view(cudart).starts_with(prefix)) return 0;
  const auto& table = drivers().at("minimum_driver");
  if (const auto it = table.find(cudart.substr(prefix.size()));
      it != table.end() && it->is_number_unsigned())
    return it->get<unsigned>();
  return 0;
}

}  // namespace imgsmith
