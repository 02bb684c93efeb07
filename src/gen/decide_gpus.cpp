// --gpu: the GPUs the image must run on, as SM architectures, checked
// against the CUDA release the image is built on (data/cuda-images.json's
// architecture_first_cuda; each GPU's compute capability from
// data/gpus.json).
#include <algorithm>
#include <string>
#include <vector>

#include "decisions.hpp"
#include "imgsmith/models/vram.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::gen {

TargetArchitectures target_architectures(const std::vector<std::string>& gpus,
                                         const std::string& cuda, const Tables& tables) {
  TargetArchitectures out;
  std::string known;
  for (const Gpu& g : known_gpus()) known += (known.empty() ? "" : ", ") + g.name;
  std::vector<unsigned> capabilities;
  std::vector<std::string> names;  // "H100,L4" is two
  for (const auto& item : gpus)
    for (const auto& name : split(item, ","))
      if (const std::string n(trim(name)); !n.empty()) names.push_back(n);
  if (names.empty()) throw InputError("--gpu: no GPU named (one of: " + known + ")");
  for (const auto& wanted : names) {
    const auto it = std::find_if(known_gpus().begin(), known_gpus().end(), [&](const Gpu& g) {
      return to_lower(g.name) == to_lower(wanted);
    });
    if (it == known_gpus().end())
      throw InputError("--gpu '" + wanted + "': unknown GPU (one of: " + known +
                       "; data/gpus.json lists them with their compute capability)");
    if (std::find(out.gpus.begin(), out.gpus.end(), it->name) != out.gpus.end()) continue;
    out.gpus.push_back(it->name);
    const std::string arch = std::to_string(it->compute_capability);
    if (std::find(capabilities.begin(), capabilities.end(), it->compute_capability) ==
        capabilities.end())
      capabilities.push_back(it->compute_capability);
    const auto first = tables.architecture_first_cuda.find(arch);
    if (first == tables.architecture_first_cuda.end()) {
      out.missing.push_back(it->name + " (sm_" + arch +
                            ") is in no CUDA release gen's table knows");
      continue;
    }
    if (!cuda.empty() && version_less(major_minor(cuda), first->second)) {
      out.missing.push_back(it->name + " (sm_" + arch + ", first built by CUDA " + first->second +
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
