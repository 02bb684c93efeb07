# The arm64 imgsmith-probe, for images built for linux/arm64 (GH200/Grace
# nodes, Graviton GPU instances): the same sources cross-compiled with
# Debian's g++-aarch64-linux-gnu as a project of their own (probes/ builds
# alone), embedding the same fatbin, since device code does not depend on
# the host CPU. imgsmith embeds it beside the x86-64 one
# (`imgsmith probe --write PATH --arch arm64`). Without the cross compiler
# imgsmith is built without it and says so when asked for it.
include(ExternalProject)
find_program(IMGSMITH_AARCH64_CXX aarch64-linux-gnu-g++)
find_program(IMGSMITH_AARCH64_CC aarch64-linux-gnu-gcc)
set(IMGSMITH_PROBE_ARM64_BINARY "")
if(IMGSMITH_AARCH64_CXX AND IMGSMITH_AARCH64_CC)
  set(arm64_dir ${PROJECT_BINARY_DIR}/probe-arm64)
  set(arm64_args -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/cmake/aarch64-linux-gnu.cmake
      -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE})
  if(IMGSMITH_PROBE_KERNELS_FATBIN)
    list(APPEND arm64_args -DIMGSMITH_PROBE_FATBIN=${IMGSMITH_PROBE_KERNELS_FATBIN}
         -DIMGSMITH_PROBE_KERNELS_CUDA=${IMGSMITH_PROBE_KERNELS_FATBIN_CUDA})
  endif()
  ExternalProject_Add(imgsmith-probe-arm64
    SOURCE_DIR ${PROJECT_SOURCE_DIR}/probes
    BINARY_DIR ${arm64_dir}
    CMAKE_ARGS ${arm64_args}
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON  # its sources are this project's: make decides what is stale
    BUILD_BYPRODUCTS ${arm64_dir}/imgsmith-probe
    DEPENDS imgsmith-probe  # the fatbin it embeds
    USES_TERMINAL_BUILD OFF)
  set(IMGSMITH_PROBE_ARM64_BINARY ${arm64_dir}/imgsmith-probe)
else()
  message(WARNING "aarch64-linux-gnu-g++ not found: imgsmith is built without the arm64 probe "
                  "(scripts/setup.sh installs g++-aarch64-linux-gnu)")
endif()
