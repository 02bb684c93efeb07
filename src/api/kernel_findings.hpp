// The findings about the image's CUDA kernels, which need both the kernel
// inventory (kernels/) and who installed each binary (attribution/), so
// they are made here, beside the call that has both (internal to api/).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "imgsmith/analysis/analysis.hpp"
#include "imgsmith/attribution/findings.hpp"
#include "imgsmith/kernels/kernel_inventory.hpp"
#include "imgsmith/models/vram.hpp"

namespace imgsmith::api_detail {

// What attribution says of one CUDA binary of the inventory.
struct BinaryOwner {
  std::string category;  // "cuda", "framework", "app"...
  std::uint32_t layer = 0;
};

// Looked up by path without a copy of the path: the walk hands out every
// file of the image, and only the inventory's few are kept.
struct PathHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using BinaryOwners = std::unordered_map<std::string, BinaryOwner, PathHash, std::equal_to<>>;

// The inventory's paths, owners still unknown.
BinaryOwners owners_to_find(const KernelInventory& kernels);

// sass-for-other-gpus: with target GPUs, the SASS no target loads, in the
// binaries that can be built again for them (not NVIDIA's own libraries,
// category "cuda"); its fix names the targets' architectures. Bytes 0 when
// there is none (or no target).
Finding sass_for_other_gpus(const KernelInventory& kernels, const std::vector<Gpu>& targets,
                            const BinaryOwners& owners, const Analysis& analysis);

// no-kernel-for-gpu (a defect): the binaries with no code that runs on
// some of `judged` (the target GPUs, else every GPU of data/gpus.json:
// `targets` says which), and for which. ptx-jit-only: those some of them
// run only by compiling PTX. Paths matching `ignore` are left out; no
// paths: no finding (bytes 0 either way).
Finding no_kernel_for_gpu(const KernelInventory& kernels, const std::vector<Gpu>& judged,
                          bool targets, const std::vector<Glob>& ignore, std::size_t top);
Finding ptx_jit_only(const KernelInventory& kernels, const std::vector<Gpu>& judged, bool targets,
                     const std::vector<Glob>& ignore, std::size_t top);

}  // namespace imgsmith::api_detail
