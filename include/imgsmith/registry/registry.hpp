// Images read straight from a registry (the OCI distribution API), and the
// one place that decides whether an `analyze` input is a file or a registry
// reference.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imgsmith/source/blob_store.hpp"
#include "imgsmith/source/image.hpp"

namespace imgsmith {

// A reference normalised the way Docker does it: "ubuntu" is
// docker.io/library/ubuntu:latest, served by registry-1.docker.io.
struct RegistryRef {
  std::string registry;    // as written or implied: "docker.io", "localhost:5000"
  std::string repository;  // "library/ubuntu"
  std::string tag;         // "" when pinned by digest only
  std::string digest;      // "sha256:..." or ""

  // Parses NAME[:TAG][@DIGEST]. Returns nothing when `text` is not a valid
  // reference (upper case, empty parts, a bad digest...).
  static std::optional<RegistryRef> parse(const std::string& text);
  std::string api_host() const;   // registry-1.docker.io for Docker Hub
  std::string reference() const;  // the tag or digest to ask for
  std::string str() const;        // docker.io/library/ubuntu:22.04
};

struct RegistryOptions {
  std::vector<std::string> insecure;  // hosts reached over plain HTTP / unverified TLS
  std::string docker_config;          // directory of config.json; "" = $DOCKER_CONFIG or ~/.docker
  long connect_timeout_s = 15;
  long stall_timeout_s = 30;
  int retries = 3;
  unsigned parallel = 4;  // layer downloads at once
  // docker://: "auto" reads the daemon's storage in place when it can and
  // streams `docker save` otherwise; "storage" insists on the first (the
  // layers' tar-split records where the daemon kept them), "walk" too but
  // walks every diff directory, "save" always streams.
  std::string docker_read = "auto";
};

// Whether `input` names a registry image rather than a file: it is no
// existing path, has no tar-like extension, and parses as a reference.
bool is_registry_input(const std::string& input);

// Opens an image in a registry as a blob store: the resolver reads its
// index.json (naming the manifest the registry returned for the reference)
// and blobs, fetched on demand; layers stream into the scanner with their
// sha256 checked. Throws InputError naming the reference.
std::unique_ptr<BlobStore> open_registry_store(const RegistryRef& ref,
                                               const RegistryOptions& options,
                                               const ProgressFn& progress, const CaptureFn& capture,
                                               const CaptureFn& stream_hash);

// docker://NAME[:TAG]: an image of the local Docker daemon. The daemon is
// found through DOCKER_HOST (unix:// or tcp://), else /var/run/docker.sock.
// Where it keeps the image in overlay2 and this process can read that
// storage (the daemon is local, the user root or allowed), the layers are
// read in place, located through the Engine API (image inspect, info) and
// checked against the image's IDs; otherwise the image is streamed as the
// daemon saves it (GET /images/NAME/get), with no temporary file. Progress
// says which. `mode` is RegistryOptions::docker_read. Throws InputError
// when the daemon cannot be reached or has no such image.
std::unique_ptr<BlobStore> open_docker_daemon(const std::string& name, const std::string& mode,
                                              const ProgressFn& progress, const CaptureFn& capture,
                                              const CaptureFn& stream_hash);

// podman://NAME[:TAG]: an image of Podman, through its Docker-compatible API
// service, streamed as `podman save` writes it (docker-archive). The socket
// is CONTAINER_HOST (unix:// or tcp://), else root's /run/podman/podman.sock,
// else the user's $XDG_RUNTIME_DIR/podman/podman.sock (/run/user/UID/...).
// Throws InputError when the service cannot be reached or has no such image.
std::unique_ptr<BlobStore> open_podman(const std::string& name, const ProgressFn& progress,
                                       const CaptureFn& capture, const CaptureFn& stream_hash);
// Which socket podman:// uses, from CONTAINER_HOST, the user id and
// XDG_RUNTIME_DIR (either may be null): a unix:// or tcp:// address.
std::string podman_socket(const char* container_host, unsigned uid, const char* xdg_runtime_dir);

}  // namespace imgsmith
