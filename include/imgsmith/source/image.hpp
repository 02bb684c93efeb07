// Finding the image inside a source: docker save's manifest.json, or an OCI
// index (possibly nested, possibly multi-platform), down to one config and
// its ordered layers.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "imgsmith/source/blob_store.hpp"

namespace imgsmith {

struct Platform {
  std::string os = "linux";
  std::string architecture = "amd64";
  std::string variant;  // empty: any

  // "linux/arm64/v8" -> {linux, arm64, v8}; throws InputError when malformed.
  static Platform parse(const std::string& text);
  std::string str() const;
};

struct ImageSelector {
  std::optional<Platform> platform;  // nullopt: linux/amd64, not insisted on
  std::string image;                 // a tag or reference name; empty: the only/first image
};

struct LayerRef {
  std::string blob;     // path inside the store
  std::string digest;   // the manifest's digest for the blob, else the diff_id
  std::string diff_id;  // sha256 of the uncompressed tar, from the config
};

struct ResolvedImage {
  std::string format;  // "docker-save", "docker-save+oci", "oci-archive", "oci-layout"
  std::vector<std::string> tags;
  std::string config_digest;
  nlohmann::json config;
  std::vector<LayerRef> layers;
  std::vector<std::string> warnings;
};

// Throws InputError naming the store when no image can be found, a document
// is malformed, or no manifest matches the selector.
ResolvedImage resolve_image(const BlobStore& store, const ImageSelector& selector);

}  // namespace imgsmith
