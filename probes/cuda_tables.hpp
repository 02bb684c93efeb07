// Lookups in the probe's CUDA tables (generated from data/cuda-drivers.json
// by cmake/probe_tables.cmake), shared by the benchmark's kernel loading
// (bench.cpp) and the start-up kernel check (kernel_check.cpp).
#pragma once

#include "probe_tables.hpp"

namespace probe {

// The first CUDA release that loads PTX of `isa` (X * 1000 + Y * 10); 0 unknown.
inline int cuda_for_ptx_isa(int isa) {
  for (const auto& row : imgsmith::probe_tables::kPtxVersions)
    if (row.isa == isa) return row.cuda;
  return 0;
}

// The first driver branch of CUDA `cuda`; 0 unknown.
inline int driver_for_cuda(int cuda) {
  for (const auto& row : imgsmith::probe_tables::kCudaReleases)
    if (row.cuda == cuda) return row.driver;
  return 0;
}

}  // namespace probe
