// --gpu: the GPUs the image must run on, as SM architectures, checked
// against the CUDA release the image is built on (data/cuda-images.json's
// architecture_first_cuda; each GPU's compute capability from
// data/gpus.json).
#include <algorithm>
#include <string>
#include <vector>

#include "decisions.hpp"
#include "imgsmith/models/vram.hpp"

namespace imgsmith::gen {

TargetArchitectures target_architectures(const std::vector<std::string>& gpus,
                                         const std::string& cuda, const Tables& tables) {
  TargetArchitectures out;
  std::vector<unsigned> capabilities;
  for (const Gpu& gpu : parse_gpu_list(gpus)) {
    out.gpus.push_back(gpu.name);
    const std::string arch = std::to_string(gpu.compute_capability);
    if (std::find(capabilities.begin(), capabilities.end(), gpu.compute_capability) ==
        capabilities.end())
      capabilities.push_back(gpu.compute_capability);
    const auto first = tables.architecture_first_cuda.find(arch);
    if (first == tables.architecture_first_cuda.end()) {
      out.missing.push_back(gpu.name + " (sm_" + arch +
                            ") is in no CUDA release gen's table knows");
      continue;
    }
    if (!cuda.empty() && version_less(major_minor(cuda), first->second)) {
      out.missing.push_back(gpu.name + " (sm_" + arch + ", first built by CUDA " + first->second +
                            ")");
      if (out.needed_cuda.empty() || version_less(out.needed_cuda, first->second))
        out.needed_cuda = first->second;
    }
  }
  std::sort(capabilities.begin(), capabilities.end());
  for (const unsigned cc : capabilities) out.archs.push_back(std::to_string(cc));
  return out;
}

}  // namespace imgsmith::gen
