// The probe as an image: a FROM-scratch image per CPU holding only
// /imgsmith-probe, under one multi-platform index, written as an OCI image
// layout in a tar (an "OCI archive"). A generated Dockerfile copies the
// probe from it (`--build-arg IMGSMITH_PROBE_IMAGE=REF`, or gen's
// --probe-image REF), so a fresh clone builds without imgsmith installed:
//   imgsmith probe --write-image probe.tar
//   skopeo copy --all oci-archive:probe.tar docker://REGISTRY/imgsmith-probe:VERSION
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace imgsmith {

// One CPU's probe: Docker's architecture name (amd64, arm64) and the binary.
struct ProbeBinary {
  std::string arch;
  std::string bytes;
};

// The archive's bytes. Deterministic: no timestamps (every tar entry and
// the layer's file dated 0, the config without `created`), so the same
// probes give the same digests and a registry stores the same blobs once.
// `tag` is the index's org.opencontainers.image.ref.name, the name skopeo
// and other readers of the layout select it by.
std::string probe_image_archive(const std::vector<ProbeBinary>& probes, const std::string& tag);

}  // namespace imgsmith
