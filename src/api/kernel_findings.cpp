#include "kernel_findings.hpp"

#include <algorithm>
#include <set>

#include "imgsmith/util/size.hpp"

namespace imgsmith::api_detail {

BinaryOwners owners_to_find(const KernelInventory& kernels) {
  BinaryOwners out;
  for (const CudaBinaryAt& b : kernels.binaries) out.emplace(b.path, BinaryOwner{});
  return out;
}

Finding sass_for_other_gpus(const KernelInventory& kernels, const std::vector<Gpu>& targets,
                            const BinaryOwners& owners, const Analysis& analysis) {
  Finding f = finding_of("sass-for-other-gpus");
  if (targets.empty()) return f;
  std::vector<unsigned> ccs;
  std::string names;
  for (const Gpu& g : targets) {
    ccs.push_back(g.compute_capability);
    names += (names.empty() ? "" : ", ") + g.name;
  }
  std::sort(ccs.begin(), ccs.end());
  ccs.erase(std::unique(ccs.begin(), ccs.end()), ccs.end());

  std::set<std::uint32_t> layers;
  std::size_t binaries = 0, app_binaries = 0;
  for (const CudaBinaryAt& b : kernels.binaries) {
    const auto owner = owners.find(b.path);
    // NVIDIA's libraries (cuBLAS, cuDNN...: the toolkit's or nvidia-* wheels')
    // cannot be built again; a file attribution never saw is not counted.
    if (owner == owners.end() || owner->second.category.empty() || owner->second.category == "cuda")
      continue;
    const std::uint64_t unused = sass_bytes_unused_by(b.binary, ccs);
    if (unused == 0) continue;
    ++binaries;
    if (owner->second.category == "app") ++app_binaries;
    f.bytes += unused;
    layers.insert(owner->second.layer);
    const std::uint32_t layer = owner->second.layer;
    if (layer < analysis.layers.size() && analysis.layers[layer].base) f.base_bytes += unused;
    f.paths.push_back(FindingPath{b.path, unused});
  }
  if (f.bytes == 0) return f;
  std::sort(f.paths.begin(), f.paths.end(), [](const FindingPath& x, const FindingPath& y) {
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.path < y.path;
  });
  if (f.paths.size() > analysis.top) f.paths.resize(analysis.top);
  f.layers.assign(layers.begin(), layers.end());

  // The targets' architectures as each build system spells them.
  std::string cmake, torch, gencode;
  for (const unsigned cc : ccs) {
    cmake += (cmake.empty() ? "" : ";") + std::to_string(cc) + "-real";
    torch += (torch.empty() ? "" : ";") + compute_capability_text(cc);
    gencode += (gencode.empty() ? "" : " ") + std::string("-gencode arch=compute_") +
               std::to_string(cc) + ",code=sm_" + std::to_string(cc);
  }
  f.message = format_size(f.bytes) + " of SASS in " + std::to_string(binaries) +
              (binaries == 1 ? " CUDA binary" : " CUDA binaries") +
              " is for GPUs other than the targets (" + names + "): none of them loads it";
  f.fix = "build " + std::string(app_binaries == binaries ? "the project's CUDA code" : "it") +
          " for the target GPUs only: CMAKE_CUDA_ARCHITECTURES=\"" + cmake +
          "\", TORCH_CUDA_ARCH_LIST=\"" + torch + "\" or nvcc " + gencode +
          (app_binaries == binaries ? " (imgsmith gen --gpu " + names + " sets them)"
                                    : "; a framework's wheels are built for every GPU, so for "
                                      "them that means building the framework from source with "
                                      "these settings") +
          "; add +PTX (TORCH_CUDA_ARCH_LIST) or the newest as a virtual architecture to keep "
          "running on GPUs after these";
  return f;
}

}  // namespace imgsmith::api_detail
