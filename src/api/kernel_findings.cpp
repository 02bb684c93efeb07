#include "kernel_findings.hpp"

#include <algorithm>
#include <map>
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

namespace {

// Per binary, the GPUs of `judged` it has no code for (`jit`: that it runs
// only through PTX JIT), binaries in path order. The pointers are into
// `judged`: `verdicts` are verdicts_per_gpu(..., judged), one per GPU in
// its order, and may be a temporary.
using GpusOf = std::map<std::string, std::vector<const Gpu*>>;
GpusOf binaries_failing(const std::vector<GpuKernelVerdict>& verdicts,
                        const std::vector<Gpu>& judged, bool jit, const std::vector<Glob>& ignore) {
  GpusOf out;
  for (std::size_t i = 0; i < verdicts.size() && i < judged.size(); ++i)
    for (const std::string& path : jit ? verdicts[i].jit : verdicts[i].none)
      if (!matches_any(ignore, path)) out[path].push_back(&judged[i]);
  return out;
}

std::string gpu_names(const std::vector<const Gpu*>& gpus) {
  std::string names;
  for (const Gpu* g : gpus)
    names += (names.empty() ? "" : ", ") + g->name + " (" +
             compute_capability_text(g->compute_capability) + ")";
  return names;
}

// The message's list: each binary's file name and the GPUs it fails on,
// the first `top` of them.
std::string per_binary(const GpusOf& failing, std::size_t top) {
  std::string text;
  std::size_t n = 0;
  for (const auto& [path, gpus] : failing) {
    if (n++ == top) {
      text += "; and " + std::to_string(failing.size() - top) + " more";
      break;
    }
    std::string gpu_list;
    for (const Gpu* g : gpus) gpu_list += (gpu_list.empty() ? "" : ", ") + g->name;
    text += (text.empty() ? "" : "; ") + path.substr(path.rfind('/') + 1) + " on " + gpu_list;
  }
  return text;
}

// The GPUs of all binaries, once each, in `judged`'s order.
std::vector<const Gpu*> gpus_of(const GpusOf& failing, const std::vector<Gpu>& judged) {
  std::vector<const Gpu*> out;
  for (const Gpu& g : judged)
    for (const auto& [path, gpus] : failing)
      if (std::any_of(gpus.begin(), gpus.end(), [&](const Gpu* x) { return x->name == g.name; })) {
        out.push_back(&g);
        break;
      }
  return out;
}

// The build settings and releases that give code for these GPUs: the CUDA
// release that first compiles for the newest of them, the torch release
// with a wheel on it (when a binary is torch's), and the architecture list
// as each build system spells it.
std::string code_for(const std::vector<const Gpu*>& gpus, const GpusOf& binaries) {
  std::set<unsigned> ccs;
  for (const Gpu* g : gpus) ccs.insert(g->compute_capability);
  std::string cuda;  // the newest first release among them
  for (const unsigned cc : ccs)
    if (const std::string c = first_cuda_for_arch(cc);
        !c.empty() && cuda_release_number(c) > cuda_release_number(cuda))
      cuda = c;
  std::string torch_list, cmake_list;
  for (const unsigned cc : ccs) {
    torch_list += (torch_list.empty() ? "" : ";") + compute_capability_text(cc);
    cmake_list += (cmake_list.empty() ? "" : ";") + std::to_string(cc);
  }
  std::string fix;
  const bool torch = std::any_of(binaries.begin(), binaries.end(), [](const auto& b) {
    return b.first.find("/site-packages/torch/") != std::string::npos;
  });
  if (torch && !cuda.empty())
    if (const auto [release, build] = first_torch_on_cuda(cuda); !release.empty()) {
      std::string tag = "cu" + build;
      std::erase(tag, '.');
      fix += "torch >= " + release + " from its CUDA " + build +
             " wheels (pip install --index-url https://download.pytorch.org/whl/" + tag +
             " torch) is the first with code for them; ";
    }
  fix += (cuda.empty() ? std::string("a CUDA release that compiles for them")
                       : "CUDA " + cuda + " or newer compiles for them") +
         ": rebuild the project's own code with TORCH_CUDA_ARCH_LIST=\"" + torch_list +
         "\" or CMAKE_CUDA_ARCHITECTURES=\"" + cmake_list +
         "\" (imgsmith gen --gpu sets them), and take releases of the other packages built "
         "with it";
  return fix;
}

std::string judged_note(bool targets) {
  return targets ? "" : " (of every GPU in data/gpus.json; --gpu names the ones you deploy on)";
}

}  // namespace

Finding no_kernel_for_gpu(const KernelInventory& kernels, const std::vector<Gpu>& judged,
                          bool targets, const std::vector<Glob>& ignore, std::size_t top) {
  Finding f = finding_of("no-kernel-for-gpu");
  f.defect = true;
  const GpusOf failing = binaries_failing(verdicts_per_gpu(kernels, judged), judged, false, ignore);
  if (failing.empty()) return f;
  const std::vector<const Gpu*> gpus = gpus_of(failing, judged);
  f.message = std::to_string(failing.size()) +
              (failing.size() == 1 ? " CUDA binary has" : " CUDA binaries have") +
              " no code (SASS or PTX) for " + gpu_names(gpus) + judged_note(targets) +
              ": there it fails at its first kernel with \"no kernel image is available for "
              "execution on the device\" (" +
              per_binary(failing, top) + ")";
  f.fix = code_for(gpus, failing);
  for (const auto& [path, g] : failing)
    if (f.paths.size() < top) f.paths.push_back(FindingPath{path, 0});
  return f;
}

Finding ptx_jit_only(const KernelInventory& kernels, const std::vector<Gpu>& judged, bool targets,
                     const std::vector<Glob>& ignore, std::size_t top) {
  Finding f = finding_of("ptx-jit-only");
  f.defect = true;
  const auto verdicts = verdicts_per_gpu(kernels, judged);
  const GpusOf jit = binaries_failing(verdicts, judged, true, ignore);
  if (jit.empty()) return f;
  const std::vector<const Gpu*> gpus = gpus_of(jit, judged);
  // The PTX one GPU compiles at most, and its newest ISA, of the binaries
  // kept (an --ignore'd one counts for neither).
  std::uint64_t most = 0;
  unsigned isa = 0;
  for (const Gpu& g : judged) {
    std::uint64_t bytes = 0;
    for (const CudaBinaryAt& b : kernels.binaries) {
      if (!jit.contains(b.path)) continue;
      const BinaryOnGpu on = binary_on_gpu(b.binary, g.compute_capability);
      if (on.verdict != KernelVerdict::Jit) continue;
      bytes += on.jit_bytes;
      isa = std::max(isa, on.ptx_isa);
    }
    most = std::max(most, bytes);
  }
  const std::string cuda = cuda_for_ptx_isa(isa);
  const unsigned driver = cuda.empty() ? 0 : driver_for_cuda(cuda);
  f.message =
      std::to_string(jit.size()) + (jit.size() == 1 ? " CUDA binary runs" : " CUDA binaries run") +
      " on " + gpu_names(gpus) + judged_note(targets) +
      " only by compiling PTX when first loaded (up to " + format_size(most) +
      " of it for one GPU): minutes at a cold start, and no start at all on a driver "
      "older than its PTX ISA " +
      ptx_isa_text(isa) +
      (cuda.empty() ? ""
                    : " (CUDA " + cuda + (driver > 0 ? ", driver " + std::to_string(driver) : "") +
                          " or newer)") +
      " (" + per_binary(jit, top) + ")";
  f.fix = "add SASS for them: " + code_for(gpus, jit) +
          "; else keep CUDA's compiled code across starts (CUDA_CACHE_PATH on a volume, "
          "CUDA_CACHE_MAXSIZE above its 1 GiB default)";
  for (const auto& [path, g] : jit)
    if (f.paths.size() < top) f.paths.push_back(FindingPath{path, 0});
  return f;
}

}  // namespace imgsmith::api_detail
